package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"google.golang.org/protobuf/proto"
)

// Kind is the kind of a database.
type Kind string

// Database kinds.
const (
	// KindPIR: fixed-size records, read one at a time by private
	// information retrieval (the device never learns which).
	KindPIR Kind = "pir"
	// KindVectors: float vectors, searched by encrypted inner product.
	KindVectors Kind = "vectors"
	// KindKV: values read by key (keyword PIR over a cuckoo table of
	// sealed buckets, package client/kv, on the LWE scheme).
	KindKV Kind = "kv"
)

// Info describes a database: the manifest its head object holds.
type Info struct {
	Header
	Preset string `json:"preset,omitempty"` // the FHE preset of a BGV PIR or vector database
	// Parts: the part of the database's kind (exactly one is set).
	Parts
	// Sealed: records are sealed on the client (package seal) before they
	// are stored, under a key derived from the owner's data key; Salt
	// (hex) makes the current generation's key unique. Neither is secret.
	Sealed bool `json:"sealed,omitempty"`
	Salt   Hex  `json:"salt,omitempty"`
	// Token names the load that wrote the current generation (random hex):
	// its data lives under "<name>/g<generation>.<token>/", so loads that
	// run at once never write the same objects. Empty for a generation
	// written before loads carried one ("<name>/g<generation>/").
	Token string `json:"token,omitempty"`
	Bytes int64  `json:"bytes"` // stored data of the current generation
	// Delta: the changes made since the current generation was written
	// (delta.go), in sealed segment objects the manifest lists; every
	// query reads them whole after the manifest.
	// DeltaMax bounds its size and CompactAt is the size at which an
	// update reports that compaction is due.
	Delta     *Delta    `json:"delta,omitempty"`
	DeltaMax  int       `json:"delta_max,omitempty"`
	CompactAt int       `json:"compact_at,omitempty"`
	Created   time.Time `json:"created"`
	Loaded    time.Time `json:"loaded,omitzero"`

	// Incarnation (hex, random) names the database from its creation to
	// its drop; KeyNonce (hex, random, new in every generation) selects the
	// generation's key; OwnerKey is the owner key of the key set that
	// created it (the one that signs its grants). InsecureParams: created
	// on a parameter set marked insecure, by explicit request. Members: the
	// readers the owner granted, with the member keys their grants are
	// sealed to (each generation's key is wrapped for every one). All of it
	// is under the manifest's tag (trust.go).
	Incarnation    string            `json:"incarnation"`
	KeyNonce       string            `json:"key_nonce"`
	OwnerKey       []byte            `json:"owner_key"`
	InsecureParams bool              `json:"insecure_params,omitempty"`
	Members        map[string]Member `json:"members,omitempty"`

	keys dbKeys // the generation's keys, verified (trust.go)
}

// UnmarshalJSON reads a manifest, as written now or by a build before
// the kind-specific parts (its flat fields; the tag covers the stored
// bytes, so those manifests verify unchanged), and refuses one whose part
// does not match its kind.
func (in *Info) UnmarshalJSON(b []byte) error {
	type plain Info // Info without this method
	*in = Info{}    // a description is read whole, never merged into another
	if err := json.Unmarshal(b, (*plain)(in)); err != nil {
		return err
	}
	return DecodeParts(b, in.Kind, &in.Parts)
}

// Member is an identity the owner granted a role on a database.
type Member struct {
	Role      Role   `json:"role"`
	MemberKey []byte `json:"member_key"` // its member.pub
}

// A database's objects: "<name>/head" (its manifest, replaced in one
// compare-and-swap Put: that Put publishes a generation),
// "<name>/g<generation>.<token>/..." (its data)
// and "<name>/members/<identity>/..." (each member's area: its evaluation
// keys per key set, and the grant an owner left it).
// (package objname owns the names).
func headObject(name string) string { return objname.Manifest(name) }
func genPrefix(in *Info) string     { return objname.Generation(in.Name, in.Generation, in.Token) }

// dataGeneration is the generation whose data object (an object of
// database name) belongs to.
func dataGeneration(name, object string) (uint64, bool) { return objname.GenerationOf(name, object) }

// DataPrefix is the prefix of the current generation's data objects
// ("<name>/g<generation>.<token>/"): what Bytes counts, the objects a
// copy of the database must hold whole.
func (in *Info) DataPrefix() string { return genPrefix(in) + "/" }

func keyPrefix(name, member, keySet string) string { return objname.Keys(name, member, keySet) }

// readBlob reads a blob object's bytes.
func (c *Client) readBlob(ctx context.Context, name string) ([]byte, error) {
	resp, err := c.dev.Get(ctx, &devicepb.GetRequest{Name: name})
	if err != nil {
		return nil, err
	}
	b, err := api.BlobBytes(resp)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", name, err)
	}
	return b, nil
}

// writeBlob replaces a blob object: one Put, atomic in the store; if
// ifGen is set, only if the object is still at generation *ifGen (0: does
// not exist), else api.ErrStale.
func (c *Client) writeBlob(ctx context.Context, name string, b []byte, ifGen *object.Generation) error {
	limb := object.EncodeBlob(b)
	put := api.PutRaw(name, object.KindBlob, object.BlobShape(len(limb)), [][]byte{limb})
	if ifGen != nil {
		put.IfGeneration = proto.Uint64(uint64(*ifGen))
	}
	_, err := c.dev.Put(ctx, put)
	return err
}

// isNotFound reports a missing object, from a device in process or over
// gRPC.
func isNotFound(err error) bool {
	return errors.Is(err, api.ErrNotFound)
}

// readInfo reads a database's manifest.
func (c *Client) readInfo(ctx context.Context, name string) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return c.readManifest(ctx, name)
}

// readHead reads a database's manifest and the generation of its head
// object, to replace it by compare-and-swap: the generation is read
// first, so a head replaced in between makes the swap fail, never succeed
// over a manifest it did not read.
func (c *Client) readHead(ctx context.Context, name string) (*Info, object.Generation, error) {
	in, gen, _, err := c.readHeadFence(ctx, name)
	return in, gen, err
}

// readHeadFence is readHead, and whether a compaction's fence stands
// (fence.go): the same List finds both.
func (c *Client) readHeadFence(ctx context.Context, name string) (*Info, object.Generation, bool, error) {
	if err := checkName(name); err != nil {
		return nil, 0, false, err
	}
	list, err := c.dev.List(ctx, &devicepb.ListRequest{Prefix: headObject(name), MaxObjects: 2})
	if err != nil {
		return nil, 0, false, fmt.Errorf("client: read %s: %w", name, err)
	}
	var gen object.Generation
	fenced := false
	for _, o := range list.Objects {
		switch o.Name {
		case headObject(name):
			gen = object.Generation(o.Generation)
		case fenceObject(name):
			fenced = true
		}
	}
	in, err := c.readManifest(ctx, name)
	return in, gen, fenced, err
}

// readManifest reads and verifies a database's manifest (trust.go).
func (c *Client) readManifest(ctx context.Context, name string) (*Info, error) {
	floor, err := c.keys.seenGeneration(name)
	if err != nil {
		return nil, err
	}
	raw, err := c.readHeadObject(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.openManifest(ctx, name, raw, floor)
}

// readHeadObject reads database name's head object as stored.
func (c *Client) readHeadObject(ctx context.Context, name string) ([]byte, error) {
	raw, err := c.readBlob(ctx, headObject(name))
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w %q", ErrNoDatabase, name)
		}
		return nil, fmt.Errorf("client: read %s: %w", name, err)
	}
	return raw, nil
}

// writeInfo replaces a database's manifest if its head is still at
// generation ifGen (0: creates it): one compare-and-swap Put, atomic in
// the store; api.ErrStale if the head changed.
func (c *Client) writeInfo(ctx context.Context, in *Info, ifGen object.Generation) error {
	b, err := sealManifest(in)
	if err != nil {
		return err
	}
	if err := c.writeBlob(ctx, headObject(in.Name), b, &ifGen); err != nil {
		return fmt.Errorf("client: publish %s: %w", in.Name, err)
	}
	return c.keys.noteGeneration(in)
}

// StoredRecordSize is the size of a record as stored: sealed records
// carry their tag.
func (in *Info) StoredRecordSize() int {
	if in.Sealed {
		return in.pir().RecordSize + seal.Overhead
	}
	return in.pir().RecordSize
}
