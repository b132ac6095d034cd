package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	xhkdf "golang.org/x/crypto/hkdf"
)

func fixedKeys() (DataKey, Salt) {
	var k DataKey
	var s Salt
	for i := range k {
		k[i], s[i] = byte(i), byte(0xa0+i)
	}
	return k, s
}

func TestSealRoundTripAndSize(t *testing.T) {
	k, s := fixedKeys()
	sl, err := NewSealer(k, "acct", 3, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range [][]byte{{}, []byte("SECRET-0007"), bytes.Repeat([]byte{0xff}, 4096)} {
		sealed := sl.Seal(nil, 7, rec)
		if len(sealed) != len(rec)+Overhead {
			t.Fatalf("sealed %d bytes into %d, want +%d", len(rec), len(sealed), Overhead)
		}
		if len(rec) > 4 && bytes.Contains(sealed, rec[:len(rec)/2]) {
			t.Fatal("the sealed record holds its plaintext")
		}
		got, err := sl.Open(nil, 7, sealed)
		if err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("Open = %q, %v; want %q", got, err, rec)
		}
	}
}

// TestSealMatchesAnIndependentDerivation recomputes a sealed record with
// x/crypto's HKDF and the standard GCM, from the construction the package
// documents: a failure means the format changed.
func TestSealMatchesAnIndependentDerivation(t *testing.T) {
	k, s := fixedKeys()
	db, g, idx := "acct", uint64(3), uint64(7)
	info := append([]byte("rosemary record key v1\x00"), 0, 0, 0, 4)
	info = append(info, db...)
	info = binary.BigEndian.AppendUint64(info, g)
	key := make([]byte, 32)
	if _, err := io.ReadFull(xhkdf.New(sha256.New, k[:], s[:], info), key); err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, 12)
	binary.BigEndian.PutUint64(nonce[4:], idx)
	want := gcm.Seal(nil, nonce, []byte("SECRET-0007"), binary.BigEndian.AppendUint64(info, idx))

	sl, err := NewSealer(k, db, g, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := sl.Seal(nil, idx, []byte("SECRET-0007")); !bytes.Equal(got, want) {
		t.Fatalf("sealed %x, independent derivation %x", got, want)
	}
}

func TestOpenRefusesWhatWasNotSealedThere(t *testing.T) {
	k, s := fixedKeys()
	sl, _ := NewSealer(k, "acct", 3, s)
	sealed := sl.Seal(nil, 7, []byte("SECRET-0007"))

	otherGen, _ := NewSealer(k, "acct", 4, s)
	otherDB, _ := NewSealer(k, "acct2", 3, s)
	var s2 Salt
	otherSalt, _ := NewSealer(k, "acct", 3, s2)
	var k2 DataKey
	otherKey, _ := NewSealer(k2, "acct", 3, s)
	flipped := bytes.Clone(sealed)
	flipped[0] ^= 1
	for name, tc := range map[string]struct {
		sl    *Sealer
		index uint64
		data  []byte
	}{
		"another index":      {sl, 8, sealed},
		"another generation": {otherGen, 7, sealed},
		"another database":   {otherDB, 7, sealed},
		"another salt":       {otherSalt, 7, sealed},
		"another data key":   {otherKey, 7, sealed},
		"a flipped bit":      {sl, 7, flipped},
		"truncated":          {sl, 7, sealed[:len(sealed)-1]},
		"shorter than a tag": {sl, 7, sealed[:3]},
		"empty":              {sl, 7, nil},
	} {
		if _, err := tc.sl.Open(nil, tc.index, tc.data); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open = %v, want ErrOpen", name, err)
		}
	}
}

func TestFreshKeysDiffer(t *testing.T) {
	a, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewDataKey()
	s1, _ := NewSalt()
	s2, _ := NewSalt()
	if a == b || s1 == s2 || a == (DataKey{}) {
		t.Fatal("crypto/rand gave equal or zero keys")
	}
}

func FuzzOpen(f *testing.F) {
	k, s := fixedKeys()
	sl, _ := NewSealer(k, "acct", 3, s)
	f.Add(uint64(7), sl.Seal(nil, 7, []byte("SECRET-0007")))
	f.Add(uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, index uint64, data []byte) {
		out, err := sl.Open(nil, index, data)
		if err != nil {
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("Open failed with %v, not ErrOpen", err)
			}
			return
		}
		// Whatever opens must be what sealing it again gives.
		if !bytes.Equal(sl.Seal(nil, index, out), data) {
			t.Fatal("opened a record that does not re-seal to its input")
		}
	})
}
