package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
)

// A manifest's seeds and salts are bytes in the program and hex in its
// JSON, as manifests written before were: one decodes to the bytes, and
// encodes back to the same text; bad hex is refused.
func TestManifestHexFields(t *testing.T) {
	old := `{"name":"acct","kind":"kv","records":3,"generation":2,"salt":"00ff10","seed":"0102","hash_seed":"abcd",` +
		`"kv":{"slots":4,"slot_data":100,"max_value":300,"buckets":3}}`
	var in client.Info
	if err := json.Unmarshal([]byte(old), &in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in.Salt, []byte{0, 0xff, 0x10}) || !bytes.Equal(in.Matrix().Seed, []byte{1, 2}) || !bytes.Equal(in.KV.HashSeed, []byte{0xab, 0xcd}) ||
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

// A manifest holds its header, what every kind has, and exactly one part of
// its kind. Manifests written before the parts (flat fields; their tags
// cover those bytes) read into the part of their kind; a part of another
// kind, two parts or none are refused; and a manifest written now holds its
// part as one object, with no field of another kind.
func TestManifestParts(t *testing.T) {
	legacy := map[client.Kind]string{
		client.KindPIR: `{"name":"p","kind":"pir","records":9,"generation":1,"preset":"","record_size":64,"scheme":"lwe",` +
			`"lwe_params":"lwe2048","seed":"0a0b","rows":2048,"cols":512,"bytes":100,"incarnation":"x","key_nonce":"y","owner_key":null}`,
		client.KindKV: `{"name":"k","kind":"kv","records":5,"generation":1,"record_size":2048,"scheme":"lwe","rows":2048,"cols":8,` +
			`"kv":{"slots":4,"slot_data":480,"max_value":1000,"buckets":5},"hash_seed":"ff","entries":7}`,
		client.KindVectors: `{"name":"v","kind":"vectors","records":2,"generation":1,"dim":3,"metric":"ip","norm":2.5,` +
			`"encrypted_vectors":true,"vector_key":"fp"}`,
	}
	for kind, text := range legacy {
		var in client.Info
		if err := json.Unmarshal([]byte(text), &in); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		switch kind {
		case client.KindPIR:
			if p := in.PIR; p == nil || in.KV != nil || in.Vectors != nil || p.RecordSize != 64 || p.Scheme != client.SchemeLWE ||
				p.LWEParams != "lwe2048" || !bytes.Equal(p.Seed, []byte{10, 11}) || p.Rows != 2048 || p.Cols != 512 || in.Matrix() != p {
				t.Fatalf("pir: %+v %+v", in, in.PIR)
			}
		case client.KindKV:
			if k := in.KV; k == nil || in.PIR != nil || in.Vectors != nil || k.RecordSize != 2048 || k.Rows != 2048 || k.Cols != 8 ||
				k.Layout.Slots != 4 || k.Layout.SlotData != 480 || k.Layout.MaxValue != 1000 || k.Layout.Buckets != 5 ||
				!bytes.Equal(k.HashSeed, []byte{0xff}) || k.Entries != 7 || in.Matrix() != &k.PIRPart {
				t.Fatalf("kv: %+v %+v", in, in.KV)
			}
		case client.KindVectors:
			if v := in.Vectors; v == nil || in.PIR != nil || in.KV != nil || v.Dim != 3 || v.Metric != client.InnerProduct || v.Norm != 2.5 ||
				!v.Encrypted || v.Key != "fp" || in.Matrix() != nil {
				t.Fatalf("vectors: %+v %+v", in, in.Vectors)
			}
		}
		b, err := json.Marshal(&in)
		if err != nil {
			t.Fatal(err)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		want := map[client.Kind]string{client.KindPIR: "pir", client.KindKV: "keyword", client.KindVectors: "vectors"}[kind]
		for _, key := range []string{"pir", "keyword", "vectors", "record_size", "rows", "seed", "dim", "kv", "hash_seed", "entries", "metric"} {
			if _, ok := top[key]; ok != (key == want) {
				t.Fatalf("%s written as %s: key %q present %v", kind, b, key, ok)
			}
		}
		var again client.Info
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		if b2, _ := json.Marshal(&again); !bytes.Equal(b, b2) {
			t.Fatalf("%s: %s read back as %s", kind, b, b2)
		}
	}
	for _, bad := range []string{
		`{"name":"p","kind":"pir","keyword":{"record_size":1,"layout":{"slots":1,"slot_data":1,"max_value":1,"buckets":1}}}`,
		`{"name":"p","kind":"pir","pir":{"record_size":1},"vectors":{"dim":1,"metric":"l2"}}`,
		`{"name":"v","kind":"vectors","pir":{"record_size":1}}`,
		`{"name":"k","kind":"kv","record_size":64}`,
		`{"name":"x","kind":"tables","pir":{"record_size":1}}`,
		// a generation that stores neither mode's precomputation
		`{"name":"p","kind":"pir","pir":{"record_size":1,"no_ring":true}}`,
		`{"name":"k","kind":"kv","keyword":{"record_size":1,"no_ring":true,"layout":{"slots":1,"slot_data":1,"max_value":1,"buckets":1}}}`,
	} {
		var in client.Info
		if err := json.Unmarshal([]byte(bad), &in); !errors.Is(err, client.ErrParts) {
			t.Fatalf("%s: %v, want ErrParts", bad, err)
		}
	}
}
