package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hpke"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// The adversarial-device suite: a device that lies in every way the
// design names (SECURITY.md). Each test asserts that the client either
// gets the right answer or stops with a named error — never returns wrong
// data, never queries again with a key that saw a failure, never uses a
// key or parameters the device supplied.

// lyingDevice is an honest in-process device behind hooks that rewrite
// what it returns.
type lyingDevice struct {
	api.Device
	mu   sync.Mutex
	get  func(req *devicepb.GetRequest, resp *devicepb.GetResponse) (*devicepb.GetResponse, error)
	run  func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error)
	runs atomic.Int64 // queries (RunStream, QueryLWE) that reached the device
	last atomic.Pointer[devicepb.LWEQueryRequest]
}

func (d *lyingDevice) Get(ctx context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	resp, err := d.Device.Get(ctx, req)
	d.mu.Lock()
	hook := d.get
	d.mu.Unlock()
	if err != nil || hook == nil {
		return resp, err
	}
	return hook(req, resp)
}

func (d *lyingDevice) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	d.runs.Add(1)
	return d.Device.RunStream(ctx, req)
}

// QueryLWE passes the device's answer through the run hook.
func (d *lyingDevice) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	d.runs.Add(1)
	d.last.Store(req)
	resp, err := d.Device.QueryLWE(ctx, req)
	d.mu.Lock()
	hook := d.run
	d.mu.Unlock()
	if err != nil || hook == nil {
		return resp, err
	}
	return hook(resp)
}

func (d *lyingDevice) onGet(f func(*devicepb.GetRequest, *devicepb.GetResponse) (*devicepb.GetResponse, error)) {
	d.mu.Lock()
	d.get = f
	d.mu.Unlock()
}

func (d *lyingDevice) onRun(f func(*devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error)) {
	d.mu.Lock()
	d.run = f
	d.mu.Unlock()
}

// advEnv is one in-process device (the liar around it) and a key set.
type advEnv struct {
	dir  string
	dev  *device.Device
	liar *lyingDevice
	keys *Keys
	c    *Client
}

func newAdvEnv(t *testing.T) *advEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "store"), layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeys(filepath.Join(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	liar := &lyingDevice{Device: d}
	c := New(liar, keys)
	// These tests lie about the ring stage's answers (its column and
	// hint, its ring secret destroyed): loadPIR stores what the client's
	// mode queries, so they create ring generations. packed_test.go sets
	// LWEPacked for the packed mode's.
	c.SetLWEMode(LWERing)
	t.Cleanup(func() { c.Close() })
	return &advEnv{dir: dir, dev: d, liar: liar, keys: keys, c: c}
}

// otherClient is a second key set on the same device (same in-process
// identity).
func (e *advEnv) otherClient(t *testing.T, name string) *Client {
	t.Helper()
	keys, err := NewKeys(filepath.Join(e.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	c := New(e.liar, keys)
	t.Cleanup(func() { c.Close() })
	return c
}

func advRecords(n, size int) []byte {
	out := make([]byte, n*size)
	for i := range n {
		copy(out[i*size:], fmt.Sprintf("record %06d of the honest owner", i))
	}
	return out
}

const advSize, advN = 40, 300

// loadPIR creates and loads an LWE PIR database of advN records (test
// parameters, asked for explicitly; storing the packed mode's
// precomputation when the client queries packed).
func (e *advEnv) loadPIR(t *testing.T, name string) []byte {
	t.Helper()
	ctx := context.Background()
	if _, err := e.c.CreatePIR(ctx, name, advSize, PIROptions{LWEParams: "test", InsecureParams: true, LWEMode: e.c.lweMode}); err != nil {
		t.Fatal(err)
	}
	data := advRecords(advN, advSize)
	if _, err := e.c.Load(ctx, name, bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	return data
}

func wantRecord(t *testing.T, c *Client, db string, data []byte, i int) {
	t.Helper()
	got, err := c.Get(context.Background(), db, i)
	if err != nil || !bytes.Equal(got, data[i*advSize:(i+1)*advSize]) {
		t.Fatalf("get %s[%d] = %q, %v; want %q", db, i, got, err, data[i*advSize:(i+1)*advSize])
	}
}

// blobResponse is a Get response carrying blob b.
func blobResponse(b []byte) *devicepb.GetResponse {
	limb := object.EncodeBlob(b)
	return &devicepb.GetResponse{Kind: uint32(object.KindBlob), Polys: 1, Limbs: 1, Data: [][]byte{limb}, WordBytes: 1, LimbWords: uint32(len(limb))}
}

func blobOf(t *testing.T, resp *devicepb.GetResponse) []byte {
	t.Helper()
	b, err := api.BlobBytes(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// plantGrant seals key to member and signs it with the device's own key:
// what a device can make of a grant.
func plantGrant(t *testing.T, in *Info, to string, memberPub []byte, key [32]byte) []byte {
	t.Helper()
	pub, err := memberKEM().NewPublicKey(memberPub)
	if err != nil {
		t.Fatal(err)
	}
	payload := append(key[:], key[:]...)
	sealed, err := hpke.Seal(pub, hpke.HKDFSHA256(), hpke.AES256GCM(), grantContext(in, to), payload)
	if err != nil {
		t.Fatal(err)
	}
	devPub, devPriv, _ := ed25519.GenerateKey(nil)
	b, err := json.Marshal(grant{OwnerKey: devPub, Sealed: sealed, Sig: ed25519.Sign(devPriv, grantSigned(in, to, sealed))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAdversarialDevicePlantedGrantIsNotTheOwnersKey: the device plants,
// in the owner's member area, a grant of a key it chose (sealed to the
// owner's public member key, as anyone can); the owner loads. Its client
// never consults the grant: the records are sealed under its own key, and
// the planted key opens none of them.
func TestAdversarialDevicePlantedGrantIsNotTheOwnersKey(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	in, err := e.c.CreatePIR(ctx, "acct2", advSize, PIROptions{LWEParams: "test", InsecureParams: true})
	if err != nil {
		t.Fatal(err)
	}
	var planted [32]byte
	copy(planted[:], "a key the device chose, 32 bytes")
	// The next generation's nonce is not known before the load; the device
	// plants a grant for the current one and answers any grant read with it.
	g := plantGrant(t, in, localIdentity, e.keys.MemberPublicKey(), planted)
	e.liar.onGet(func(req *devicepb.GetRequest, resp *devicepb.GetResponse) (*devicepb.GetResponse, error) {
		if strings.Contains(req.Name, "/members/") && strings.Contains(req.Name, "/grant.") {
			return blobResponse(g), nil
		}
		return resp, nil
	})
	if err := e.c.writeBlob(ctx, grantObject(in, localIdentity), g, nil); err != nil {
		t.Fatal(err)
	}
	data := advRecords(advN, advSize)
	in, err = e.c.Load(ctx, "acct2", bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize})
	if err != nil {
		t.Fatal(err)
	}
	if in.keys.gen == planted || !in.keys.owned {
		t.Fatal("the owner took the planted key as its own")
	}
	wantRecord(t, e.c, "acct2", data, 17)
	// The device opens no stored record with its key: record 0 of the
	// generation, read back from the store as the device holds it.
	col, err := e.c.readRecordRaw(ctx, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	salt := in.sealSalt(t)
	bad, _ := seal.NewSealer(planted, in.Name, in.Generation, salt)
	if _, err := bad.Open(nil, 0, col); err == nil {
		t.Fatal("the planted key opens a stored record")
	}
	good, _ := seal.NewSealer(in.keys.gen, in.Name, in.Generation, salt)
	if rec, err := good.Open(nil, 0, col); err != nil || !bytes.Equal(rec, data[:advSize]) {
		t.Fatalf("the owner's key on its stored record 0: %q, %v", rec, err)
	}
}

// TestAdversarialDevicePlantedGrantRefusedByReader: a reader that trusts
// the owner refuses a grant the device signed itself, and a grant the
// owner signed for another reader.
func TestAdversarialDevicePlantedGrantRefusedByReader(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	e.loadPIR(t, "acct")
	bob := e.otherClient(t, "bob")
	if err := bob.keys.TrustOwner("alice", e.keys.OwnerPublicKey()); err != nil {
		t.Fatal(err)
	}
	in, err := e.c.Info(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	var planted [32]byte
	copy(planted[:], "a key the device chose, 32 bytes")
	if err := e.c.writeBlob(ctx, grantObject(in, localIdentity), plantGrant(t, in, localIdentity, bob.keys.MemberPublicKey(), planted), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Get(ctx, "acct", 3); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "does not trust") {
		t.Fatalf("bob on a device-signed grant: %v, want ErrTampered (untrusted signer)", err)
	}
	// A grant alice signed, but for carol, copied to bob's name: its
	// signature binds carol.
	carolKeys, err := NewKeys(filepath.Join(e.dir, "carol"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.writeGrant(ctx, in, "carol", carolKeys.MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	resp, err := e.dev.Get(ctx, &devicepb.GetRequest{Name: grantObject(in, "carol")})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.writeBlob(ctx, grantObject(in, localIdentity), blobOf(t, resp), nil); err != nil {
		t.Fatal(err)
	}
	bob.mu.Lock()
	clear(bob.grants)
	bob.mu.Unlock()
	if _, err := bob.Get(ctx, "acct", 3); !errors.Is(err, ErrTampered) {
		t.Fatalf("bob on carol's grant: %v, want ErrTampered", err)
	}
}

// TestAdversarialDeviceManifestRewrite: every field the device might
// change in the manifest — parameters (to the insecure set), records,
// seed, salt, generation — fails its tag; so does a manifest without one.
func TestAdversarialDeviceManifestRewrite(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	edits := map[string]func(m map[string]any){
		"params":  func(m map[string]any) { m["lwe_params"] = "default"; m["insecure_params"] = false },
		"records": func(m map[string]any) { m["records"] = 299.0 },
		"seed":    func(m map[string]any) { m["seed"] = strings.Repeat("00", 32) },
		"salt":    func(m map[string]any) { m["salt"] = strings.Repeat("11", 32) },
		"owner":   func(m map[string]any) { m["owner_key"] = []byte("someone else") },
	}
	for name, edit := range edits {
		e.liar.onGet(func(req *devicepb.GetRequest, resp *devicepb.GetResponse) (*devicepb.GetResponse, error) {
			if req.Name != "acct/head" {
				return resp, nil
			}
			var env signedManifest
			if err := json.Unmarshal(blobOf(t, resp), &env); err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			if err := json.Unmarshal(env.Manifest, &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			env.Manifest, _ = json.Marshal(m)
			b, _ := json.Marshal(env)
			return blobResponse(b), nil
		})
		_, err := e.c.Get(ctx, "acct", 5)
		if !errors.Is(err, ErrTampered) && !errors.Is(err, ErrNoGrant) {
			t.Errorf("manifest with %s rewritten: %v, want ErrTampered", name, err)
		}
	}
	e.liar.onGet(func(req *devicepb.GetRequest, resp *devicepb.GetResponse) (*devicepb.GetResponse, error) {
		if req.Name != "acct/head" {
			return resp, nil
		}
		var env signedManifest
		json.Unmarshal(blobOf(t, resp), &env)
		return blobResponse(env.Manifest), nil // the bare manifest, no tag
	})
	if _, err := e.c.Get(ctx, "acct", 5); !errors.Is(err, ErrTampered) {
		t.Errorf("untagged manifest: %v, want ErrTampered", err)
	}
	e.liar.onGet(nil)
	wantRecord(t, e.c, "acct", data, 5)
}

// TestAdversarialDeviceInsecureParamsNeedAsking: the insecure test set is
// refused unless asked for; the default is 128-bit.
func TestAdversarialDeviceInsecureParamsNeedAsking(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	if _, err := e.c.CreatePIR(ctx, "a", advSize, PIROptions{LWEParams: "test"}); !errors.Is(err, ErrInsecureParams) {
		t.Fatalf("create on the test set: %v, want ErrInsecureParams", err)
	}
	if _, err := e.c.CreateKV(ctx, "k", KVOptions{LWEParams: "test", MaxValue: 40}); !errors.Is(err, ErrInsecureParams) {
		t.Fatalf("create kv on the test set: %v, want ErrInsecureParams", err)
	}
	in, err := e.c.CreatePIR(ctx, "b", advSize, PIROptions{})
	if err != nil || in.pir().LWEParams != "default" || in.InsecureParams {
		t.Fatalf("default create: %+v, %v", in, err)
	}
	if p, err := in.lweParams(); err != nil || p.Insecure {
		t.Fatalf("default parameters: %+v, %v", p, err)
	}
}

// corruptColumn adds 2^24 to every word of the answer's column: the
// record the query asks for no longer opens.
func corruptColumn(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
	out := proto.Clone(resp).(*devicepb.LWEQueryResponse)
	for i := 0; i+4 <= len(out.Column); i += 4 {
		binary.LittleEndian.PutUint32(out.Column[i:], binary.LittleEndian.Uint32(out.Column[i:])+1<<24)
	}
	return out, nil
}

// TestAdversarialDeviceFailedAnswerIsFatalForTheKey: the device makes an
// answer fail (a shifted column, as editing a record and recomputing the
// hint does for the query that asks for it). The client says so with
// ErrTampered, destroys the ring secret and never queries that generation
// again — the device learns the position of one failure, not a bit per
// query (the reaction attack that recovered the ring secret needs many
// queries under one key). A new generation gets a new key and new Galois
// keys.
func TestAdversarialDeviceFailedAnswerIsFatalForTheKey(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	wantRecord(t, e.c, "acct", data, 1) // keys uploaded, session open
	in, err := e.c.Info(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	ring := e.keys.ringPath(in, ".key")
	if _, err := os.Stat(ring); err != nil {
		t.Fatalf("ring secret of the generation: %v", err)
	}
	e.liar.onRun(corruptColumn)
	if _, err := e.c.Get(ctx, "acct", 1234%advN); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "acct") || !strings.Contains(err.Error(), "in-process device") {
		t.Fatalf("a shifted column: %v, want ErrTampered naming the database and the device", err)
	}
	if _, err := os.Stat(ring); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the ring secret outlived the failure: %v", err)
	}
	e.liar.onRun(nil) // honest again: the key is still never used
	runs := e.liar.runs.Load()
	for _, i := range []int{0, 7, 1234 % advN} {
		if _, err := e.c.Get(ctx, "acct", i); !errors.Is(err, ErrTampered) {
			t.Fatalf("query %d after the failure: %v, want ErrTampered", i, err)
		}
	}
	// A fresh client of the same key set (a new process) too.
	c2 := New(e.liar, e.keys)
	defer c2.Close()
	if _, err := c2.Get(ctx, "acct", 0); !errors.Is(err, ErrTampered) {
		t.Fatalf("a new process after the failure: %v, want ErrTampered", err)
	}
	if n := e.liar.runs.Load(); n != runs {
		t.Fatalf("%d queries reached the device after the failure", n-runs)
	}
	// The owner loads again: a new generation, a new key, new Galois keys.
	before, _ := e.dev.List(ctx, &devicepb.ListRequest{Prefix: "acct/members/"})
	if _, err := e.c.Load(ctx, "acct", bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	wantRecord(t, e.c, "acct", data, 7)
	after, _ := e.dev.List(ctx, &devicepb.ListRequest{Prefix: "acct/members/"})
	if len(after.Objects) <= len(before.Objects) {
		t.Fatalf("no new Galois keys for the new key: %d objects before, %d after", len(before.Objects), len(after.Objects))
	}
}

// TestAdversarialDeviceMalformedAnswer: an answer of the wrong shape is a
// failure too (ErrTampered, key destroyed), not a panic.
func TestAdversarialDeviceMalformedAnswer(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	e.loadPIR(t, "acct")
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		// A column of a word less: not the answer's shape.
		out := proto.Clone(resp).(*devicepb.LWEQueryResponse)
		out.Column = out.Column[:len(out.Column)-4]
		return out, nil
	})
	if _, err := e.c.Get(ctx, "acct", 3); !errors.Is(err, ErrTampered) {
		t.Fatalf("a truncated column: %v, want ErrTampered", err)
	}
	e.liar.onRun(nil)
	if _, err := e.c.Get(ctx, "acct", 3); !errors.Is(err, ErrTampered) {
		t.Fatalf("after a malformed answer: %v, want ErrTampered", err)
	}
}

// TestAdversarialDeviceDroppedOrDelayedAnswer: a device that fails or
// stalls denies service — an error, no key destroyed — and the next honest
// answer is right.
func TestAdversarialDeviceDroppedOrDelayedAnswer(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	e.liar.onRun(func(*devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		return nil, fmt.Errorf("dropped: %w", api.ErrUnavailable)
	})
	if _, err := e.c.Get(ctx, "acct", 9); err == nil || errors.Is(err, ErrTampered) {
		t.Fatalf("a dropped answer: %v, want an error other than ErrTampered", err)
	}
	e.liar.onRun(func(resp *devicepb.LWEQueryResponse) (*devicepb.LWEQueryResponse, error) {
		time.Sleep(200 * time.Millisecond)
		return resp, nil
	})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := e.c.Get(short, "acct", 9)
	cancel()
	if errors.Is(err, ErrTampered) {
		t.Fatalf("a delayed answer: %v", err)
	}
	e.liar.onRun(nil)
	wantRecord(t, e.c, "acct", data, 9)
}

// TestAdversarialDeviceReplayedGeneration: the device serves the manifest
// of an earlier generation (which verifies: the owner wrote it) after the
// client saw a later one: ErrRollback, even from a new client of the key
// set.
func TestAdversarialDeviceReplayedGeneration(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	old, err := e.dev.Get(ctx, &devicepb.GetRequest{Name: "acct/head"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "acct", bytes.NewReader(data), LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	e.liar.onGet(func(req *devicepb.GetRequest, resp *devicepb.GetResponse) (*devicepb.GetResponse, error) {
		if req.Name == "acct/head" {
			return old, nil
		}
		return resp, nil
	})
	c2 := New(e.liar, e.keys)
	defer c2.Close()
	for _, c := range []*Client{e.c, c2} {
		if _, err := c.Get(ctx, "acct", 2); !errors.Is(err, ErrRollback) {
			t.Fatalf("a replayed generation: %v, want ErrRollback", err)
		}
	}
	e.liar.onGet(nil)
	wantRecord(t, e.c, "acct", data, 2)
}

// TestAdversarialDeviceRevokedReaderOpensNothingNew: a reader keeps the
// keys it was granted; after a revoke the owner's next generation (made
// at once) is under a key the old one does not open, and its grants are
// wrapped for the remaining readers only.
func TestAdversarialDeviceRevokedReaderOpensNothingNew(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	data := e.loadPIR(t, "acct")
	bob := e.otherClient(t, "bob")
	if err := bob.keys.TrustOwner("alice", e.keys.OwnerPublicKey()); err != nil {
		t.Fatal(err)
	}
	// In process every caller is "local": bob's grant is left there. An
	// in-process device keeps no access list until told whose it is.
	if err := e.dev.Own("acct", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Grant(ctx, "acct", localIdentity, RoleReader, bob.keys.MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	wantRecord(t, bob, "acct", data, 11)
	old, err := bob.Info(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	kept := old.keys // what a revoked reader keeps
	if err := e.c.Revoke(ctx, "acct", localIdentity); err != nil {
		t.Fatal(err)
	}
	now, err := e.c.Info(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	if now.Generation <= old.Generation || len(now.Members) != 0 {
		t.Fatalf("after the revoke: generation %d (was %d), members %v", now.Generation, old.Generation, now.Members)
	}
	col, err := e.c.readRecordRaw(ctx, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	sl, _ := seal.NewSealer(kept.gen, now.Name, now.Generation, now.sealSalt(t))
	if _, err := sl.Open(nil, 0, col); err == nil {
		t.Fatal("the revoked reader's key opens the new generation")
	}
	bob.mu.Lock()
	clear(bob.grants)
	bob.mu.Unlock()
	if _, err := bob.Get(ctx, "acct", 11); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("bob after the revoke: %v, want ErrNoGrant", err)
	}
	wantRecord(t, e.c, "acct", data, 11)
}

// sealSalt is generation in's sealing salt.
func (in *Info) sealSalt(t *testing.T) seal.Salt {
	t.Helper()
	var s seal.Salt
	raw := []byte(in.Salt)
	if len(raw) != len(s) {
		t.Fatalf("salt %s: %d bytes", in.Salt, len(raw))
	}
	copy(s[:], raw)
	return s
}

// readRecordRaw is record r of LWE generation in as the device stores it
// (sealed), read from its tile.
func (c *Client) readRecordRaw(ctx context.Context, in *Info, r int) ([]byte, error) {
	p, err := in.lweParams()
	if err != nil {
		return nil, err
	}
	shape := lwepir.Shape{Rows: in.pir().Rows, Cols: in.pir().Cols, RecordSize: in.StoredRecordSize()}
	col, row := shape.Locate(r)
	n := p.N()
	resp, err := c.dev.Get(ctx, &devicepb.GetRequest{Name: api.StoredObjectName(session.LWETilePrefix(genPrefix(in)), int64(col/n))})
	if err != nil {
		return nil, err
	}
	_, _, raw, err := api.ObjectRaw(resp)
	if err != nil {
		return nil, err
	}
	var tile []byte
	for _, limb := range raw {
		tile = append(tile, limb...)
	}
	out := make([]byte, shape.RecordSize)
	for i := range out {
		out[i] = tile[(row+i)*n+col%n]
	}
	return out, nil
}

// TestAdversarialDeviceRevokeRotatesAKeywordDatabase: a revoke rewrites a
// keyword database under a fresh key too (a compaction with nothing to
// fold), and its lookups still answer right.
func TestAdversarialDeviceRevokeRotatesAKeywordDatabase(t *testing.T) {
	e := newAdvEnv(t)
	ctx := context.Background()
	if _, err := e.c.CreateKV(ctx, "kv", KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 40, SlotData: 16}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "kv", strings.NewReader("k1,v1\nk2,value two\n"), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.dev.Own("kv", "alice"); err != nil {
		t.Fatal(err)
	}
	bob := e.otherClient(t, "bob")
	if err := e.c.Grant(ctx, "kv", localIdentity, RoleReader, bob.keys.MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	before, err := e.c.Info(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.Revoke(ctx, "kv", localIdentity); err != nil {
		t.Fatal(err)
	}
	after, err := e.c.Info(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if after.Generation <= before.Generation || after.KeyNonce == before.KeyNonce || after.keys.gen == before.keys.gen {
		t.Fatalf("revoke did not rotate: generation %d → %d", before.Generation, after.Generation)
	}
	for k, want := range map[string]string{"k1": "v1", "k2": "value two"} {
		if got, err := e.c.Lookup(ctx, "kv", []byte(k)); err != nil || string(got) != want {
			t.Fatalf("lookup %s after the revoke: %q, %v", k, got, err)
		}
	}
}
