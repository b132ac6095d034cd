package client_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
)

// A manifest's seeds and salts are bytes in the program and hex in its
// JSON, as manifests written before were: one decodes to the bytes, and
// encodes back to the same text; bad hex is refused.
func TestManifestHexFields(t *testing.T) {
	old := `{"name":"acct","kind":"kv","records":3,"generation":2,"salt":"00ff10","seed":"0102","hash_seed":"abcd"}`
	var in client.Info
	if err := json.Unmarshal([]byte(old), &in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in.Salt, []byte{0, 0xff, 0x10}) || !bytes.Equal(in.Seed, []byte{1, 2}) || !bytes.Equal(in.HashSeed, []byte{0xab, 0xcd}) ||
		in.Name != "acct" || in.Kind != client.KindKV || in.Records != 3 || in.Generation != 2 {
		t.Fatalf("decoded %+v", in)
	}
	b, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"salt":"00ff10"`, `"seed":"0102"`, `"hash_seed":"abcd"`, `"name":"acct"`, `"generation":2`} {
		if !strings.Contains(string(b), field) {
			t.Fatalf("encoded %s, want %s in it", b, field)
		}
	}
	if strings.Contains(string(b), `"vector_key"`) {
		t.Fatalf("an empty field was written: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"salt":"0g"}`), &in); err == nil {
		t.Fatal("a salt of bad hex was accepted")
	}
}
