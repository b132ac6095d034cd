package client_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// secretRecords are records "SECRET-<i>" padded with a pattern, the kind
// of plaintext an operator would grep a device's disk for.
func secretRecords(n, size int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		rec := []byte(fmt.Sprintf("SECRET-%06d:", i))
		for len(rec) < size {
			rec = append(rec, "the quick brown fox "[len(rec)%20])
		}
		b.Write(rec)
	}
	return b.Bytes()
}

// TestDeviceNeverSeesRecords: after a load, no file of the store holds a
// record's bytes (not its marker, not a 16-byte piece of it), and the
// records still come back byte for byte.
func TestDeviceNeverSeesRecords(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 48, 2000
	data := secretRecords(n, size)
	if _, err := e.c.CreatePIR(ctx, "acct", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	pieces := [][]byte{[]byte("SECRET-"), data[7*size+16 : 7*size+32]}
	var files int
	err := filepath.Walk(filepath.Join(e.dir, "store"), func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, p := range pieces {
			if bytes.Contains(raw, p) {
				t.Errorf("%s holds %q", path, p)
			}
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walked %d store files: %v", files, err)
	}
	for _, i := range []int{0, 7, n - 1} {
		got, err := e.c.Get(ctx, "acct", i)
		if err != nil || !bytes.Equal(got, data[i*size:(i+1)*size]) {
			t.Fatalf("record %d: %q, %v", i, got, err)
		}
	}
}

// tampering is a device that alters every answer of a stream run: every
// coefficient of the first limb of its first output.
type tampering struct{ api.Device }

func (d tampering) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	return alter(d.Device.RunStream(ctx, req))
}

// QueryLWE shifts every word of an answer's column by 2^24 (a byte's
// step at the scheme's scale), or alters every byte of a packed answer.
func (d tampering) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	resp, err := d.Device.QueryLWE(ctx, req)
	if err != nil {
		return resp, err
	}
	for i := 0; i+4 <= len(resp.Column); i += 4 {
		binary.LittleEndian.PutUint32(resp.Column[i:], binary.LittleEndian.Uint32(resp.Column[i:])+1<<24)
	}
	// A packed answer: every byte changed, its size kept.
	for i := range resp.Packed {
		resp.Packed[i] ^= 0x5a
	}
	return resp, nil
}

func alter(resp *devicepb.RunStreamResponse, err error) (*devicepb.RunStreamResponse, error) {
	if err == nil && len(resp.Outputs) > 0 && len(resp.Outputs[0].Instances) > 0 {
		limb := resp.Outputs[0].Instances[0].Data[0]
		for i := 0; i+8 <= len(limb); i += 8 {
			// a small, valid residue where there was another
			binary.LittleEndian.PutUint64(limb[i:], (binary.LittleEndian.Uint64(limb[i:])+1)%3)
		}
	}
	return resp, err
}

// TestAlteredAnswerDetected: a device that changes its answer makes Get
// fail with an authentication error, never return altered bytes.
func TestAlteredAnswerDetected(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 48, 500
	data := secretRecords(n, size)
	if _, err := e.c.CreatePIR(ctx, "acct", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	bad := client.New(tampering{e.c.Device()}, e.keys)
	got, err := bad.Get(ctx, "acct", 7)
	if err == nil {
		t.Fatalf("an altered answer gave %q", got)
	}
	if !strings.Contains(err.Error(), "authentication") {
		t.Fatalf("altered answer: %v, want an authentication failure", err)
	}
	if !errors.Is(err, client.ErrTampered) {
		t.Fatalf("altered answer: %v, want ErrTampered", err)
	}
}
