package video

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// Manifest describes an encrypted video directory:
//
//	DIR/manifest.json   this struct
//	DIR/public.key      the public key used (MarshalPublicKey)
//	DIR/secret.key      the secret key, only when the keys were generated here
//	DIR/f%06d_%02d.ct   ciphertext k of frame f (full or seeded wire format)
type Manifest struct {
	N           int      `json:"n"`
	Q           []uint64 `json:"q"`
	LogScale    int      `json:"log_scale"`
	Width       int      `json:"width"`
	Height      int      `json:"height"`
	Frames      int      `json:"frames"`
	CtsPerFrame int      `json:"cts_per_frame"`
	BitsPerSlot int      `json:"bits_per_slot"`
	Seeded      bool     `json:"seeded"`
}

// Stats reports an encryption run (measured on this machine).
type Stats struct {
	Frames        int     `json:"frames"`
	Width         int     `json:"width"`
	Height        int     `json:"height"`
	N             int     `json:"n"`
	Limbs         int     `json:"limbs"`
	CtsPerFrame   int     `json:"cts_per_frame"`
	BytesPerFrame int     `json:"bytes_per_frame"`
	EncryptMs     float64 `json:"encrypt_ms_per_frame"` // pack + encrypt, excluding file writes
	FPS           float64 `json:"fps"`                  // frames per second of pack + encrypt on this CPU
	Seeded        bool    `json:"seeded"`
	KeysGenerated bool    `json:"keys_generated"`
}

// maxFrames bounds the frame count a manifest may claim.
const maxFrames = 1 << 20

func ctPath(dir string, f, k int) string {
	return filepath.Join(dir, fmt.Sprintf("f%06d_%02d.ct", f, k))
}

// Encrypt encrypts up to maxFrames frames from next (which returns
// io.EOF at the end) into dir. With pk == nil a key pair is generated and
// both keys are written to dir (demo mode); seeded selects symmetric
// encryption with seeded c1 (needs the secret key, so only with pk == nil).
func Encrypt(dir string, p edge.Params, pk []byte, seeded bool, maxFrames int, next func() (Frame, error)) (Stats, error) {
	var st Stats
	ctx, err := edge.NewContext(p)
	if err != nil {
		return st, err
	}
	codec, err := NewCodec(p)
	if err != nil {
		return st, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, fmt.Errorf("video: create %s: %w", dir, err)
	}
	var sk *edge.SecretKey
	var pub *edge.PublicKey
	if pk == nil {
		if sk, pub, err = ctx.GenKeys(); err != nil {
			return st, err
		}
		if err := os.WriteFile(filepath.Join(dir, "secret.key"), ctx.MarshalSecretKey(sk), 0o600); err != nil {
			return st, fmt.Errorf("video: write secret key: %w", err)
		}
		st.KeysGenerated = true
	} else {
		if seeded {
			return st, fmt.Errorf("video: seeded (symmetric) encryption needs the secret key; omit the public key")
		}
		if pub, err = ctx.UnmarshalPublicKey(pk); err != nil {
			return st, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "public.key"), ctx.MarshalPublicKey(pub), 0o644); err != nil {
		return st, fmt.Errorf("video: write public key: %w", err)
	}
	enc, err := edge.NewEncryptor(ctx, pub)
	if err != nil {
		return st, err
	}
	var senc *edge.SymEncryptor
	if seeded {
		if senc, err = edge.NewSymEncryptor(ctx, sk); err != nil {
			return st, err
		}
	}
	slots := make([]float64, codec.Slots)
	ct := ctx.NewCiphertext()
	sct := ctx.NewSeededCiphertext()
	man := Manifest{N: p.N, Q: p.Q, LogScale: p.LogScale, BitsPerSlot: codec.BitsPerSlot, Seeded: seeded}
	var busy time.Duration
	bytesOut := 0
	for man.Frames < maxFrames {
		f, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		if man.Frames == 0 {
			man.Width, man.Height = f.W, f.H
			man.CtsPerFrame = codec.CiphertextsPerFrame(f.W, f.H)
		} else if f.W != man.Width || f.H != man.Height {
			return st, fmt.Errorf("video: frame %d is %dx%d, stream is %dx%d", man.Frames, f.W, f.H, man.Width, man.Height)
		}
		for k := 0; k < man.CtsPerFrame; k++ {
			t0 := time.Now()
			if err := codec.Pack(f, k, slots); err != nil {
				return st, err
			}
			var b []byte
			if seeded {
				err = senc.EncryptSeeded(slots, codec.Scale, sct)
				busy += time.Since(t0)
				if err == nil {
					b, err = ctx.MarshalSeeded(sct)
				}
			} else {
				err = enc.Encrypt(slots, codec.Scale, ct)
				busy += time.Since(t0)
				if err == nil {
					b, err = ctx.MarshalCiphertext(ct)
				}
			}
			if err != nil {
				return st, err
			}
			if err := os.WriteFile(ctPath(dir, man.Frames, k), b, 0o644); err != nil {
				return st, fmt.Errorf("video: write ciphertext: %w", err)
			}
			bytesOut += len(b)
		}
		man.Frames++
	}
	if man.Frames == 0 {
		return st, fmt.Errorf("video: no frames to encrypt")
	}
	mb, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), mb, 0o644); err != nil {
		return st, fmt.Errorf("video: write manifest: %w", err)
	}
	st.Frames, st.Width, st.Height = man.Frames, man.Width, man.Height
	st.N, st.Limbs, st.CtsPerFrame, st.Seeded = p.N, len(p.Q), man.CtsPerFrame, seeded
	st.BytesPerFrame = bytesOut / man.Frames
	st.EncryptMs = float64(busy.Nanoseconds()) / 1e6 / float64(man.Frames)
	st.FPS = 1000 / st.EncryptMs
	return st, nil
}

// Decrypt decrypts the frames of dir with the secret key file skPath
// (default dir/secret.key when empty).
func Decrypt(dir, skPath string) ([]Frame, error) {
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("video: read manifest: %w", err)
	}
	var man Manifest
	if err := json.Unmarshal(mb, &man); err != nil {
		return nil, fmt.Errorf("video: parse manifest: %w", err)
	}
	if man.Frames < 1 || man.Frames > maxFrames || man.Width < 1 || man.Height < 1 ||
		man.Width > maxY4MDim || man.Height > maxY4MDim {
		return nil, fmt.Errorf("video: manifest: bad frame geometry %dx%d×%d", man.Width, man.Height, man.Frames)
	}
	p := edge.Params{Name: "video", N: man.N, Q: man.Q, LogScale: man.LogScale}
	ctx, err := edge.NewContext(p)
	if err != nil {
		return nil, fmt.Errorf("video: manifest parameters: %w", err)
	}
	codec, err := NewCodec(p)
	if err != nil {
		return nil, err
	}
	if codec.BitsPerSlot != man.BitsPerSlot || codec.CiphertextsPerFrame(man.Width, man.Height) != man.CtsPerFrame {
		return nil, fmt.Errorf("video: manifest packing (%d bits/slot, %d cts/frame) does not match the parameters", man.BitsPerSlot, man.CtsPerFrame)
	}
	if skPath == "" {
		skPath = filepath.Join(dir, "secret.key")
	}
	kb, err := os.ReadFile(skPath)
	if err != nil {
		return nil, fmt.Errorf("video: read secret key: %w", err)
	}
	sk, err := ctx.UnmarshalSecretKey(kb)
	if err != nil {
		return nil, err
	}
	dec, err := edge.NewDecryptor(ctx, sk)
	if err != nil {
		return nil, err
	}
	slots := make([]float64, codec.Slots)
	frames := make([]Frame, man.Frames)
	for fi := range frames {
		f := Frame{W: man.Width, H: man.Height, Pix: make([]byte, man.Width*man.Height)}
		for k := 0; k < man.CtsPerFrame; k++ {
			b, err := os.ReadFile(ctPath(dir, fi, k))
			if err != nil {
				return nil, fmt.Errorf("video: read ciphertext: %w", err)
			}
			var ct *edge.Ciphertext
			if man.Seeded {
				sct, err := ctx.UnmarshalSeeded(b)
				if err != nil {
					return nil, fmt.Errorf("video: frame %d ct %d: %w", fi, k, err)
				}
				ct, err = ctx.ExpandSeeded(sct)
				if err != nil {
					return nil, err
				}
			} else if ct, err = ctx.UnmarshalCiphertext(b); err != nil {
				return nil, fmt.Errorf("video: frame %d ct %d: %w", fi, k, err)
			}
			if err := dec.Decrypt(ct, slots); err != nil {
				return nil, err
			}
			if err := codec.Unpack(slots, k, f); err != nil {
				return nil, fmt.Errorf("video: frame %d: %w", fi, err)
			}
		}
		frames[fi] = f
	}
	return frames, nil
}
