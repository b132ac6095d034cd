package video

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// The directory round trip the CLI uses restores every frame exactly, for
// public-key and seeded encryption, and rejects a wrong key.
func TestDirRoundTrip(t *testing.T) {
	p, _ := edge.Preset(4096)
	for _, seeded := range []bool{false, true} {
		dir := t.TempDir()
		i := 0
		next := func() (Frame, error) { i++; return SyntheticFrame(QQVGAWidth, QQVGAHeight, i-1), nil }
		st, err := Encrypt(dir, p, nil, seeded, 2, next)
		if err != nil {
			t.Fatal(err)
		}
		if st.Frames != 2 || st.CtsPerFrame != 3 {
			t.Fatalf("stats %+v", st)
		}
		frames, err := Decrypt(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		for k, f := range frames {
			if !bytes.Equal(f.Pix, SyntheticFrame(QQVGAWidth, QQVGAHeight, k).Pix) {
				t.Fatalf("seeded=%v: frame %d not restored exactly", seeded, k)
			}
		}
		// Encrypting to the public key of the first directory, decrypting with its secret key.
		pk, _ := os.ReadFile(filepath.Join(dir, "public.key"))
		if !seeded {
			dir2 := t.TempDir()
			i = 0
			if _, err := Encrypt(dir2, p, pk, false, 1, next); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir2, "secret.key")); err == nil {
				t.Fatal("secret key written although a public key was given")
			}
			fr, err := Decrypt(dir2, filepath.Join(dir, "secret.key"))
			if err != nil || !bytes.Equal(fr[0].Pix, SyntheticFrame(QQVGAWidth, QQVGAHeight, 0).Pix) {
				t.Fatalf("decrypt with the server key: %v", err)
			}
			// A different key must be detected, not silently produce garbage.
			dir3 := t.TempDir()
			i = 0
			Encrypt(dir3, p, nil, false, 1, next)
			if _, err := Decrypt(dir2, filepath.Join(dir3, "secret.key")); err == nil {
				t.Fatal("wrong key not detected")
			}
		}
	}
}
