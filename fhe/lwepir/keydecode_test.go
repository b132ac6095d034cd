package lwepir

import "testing"

// BenchmarkUnmarshalGaloisKey decodes one stored evaluation key at the
// default parameters (a device decodes a query's keys when its ring stage
// starts).
func BenchmarkUnmarshalGaloisKey(b *testing.B) {
	p := Default()
	shape := Shape{Rows: 2048, Cols: p.N(), RecordSize: 256}
	_, evk, err := GenerateKeys(p, shape)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := MarshalGaloisKey(evk.Rotations[1])
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := UnmarshalGaloisKey(p, raw); err != nil {
			b.Fatal(err)
		}
	}
}
