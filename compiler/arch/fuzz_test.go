package arch

import "testing"

// FuzzParse: any input either fails with an error or yields an Arch that
// validates and survives a Marshal/Parse round trip.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"base":"rosemary","name":"x","nand":{"channels":4}}`))
	f.Add([]byte(`{"name":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data)
		if err != nil {
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid arch: %v", err)
		}
		b, err := Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(b); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}
