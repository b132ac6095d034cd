package device

import (
	"context"
	"encoding/binary"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/resident"
	"github.com/rosemary-fhe/rosemary/engine"
)

// testClient is a remote client with the shorthand the tests call it by:
// requests spelled out as arguments, and the engine's resident-device
// methods through a resident.Runner.
type testClient struct {
	*remote.Client
	run *resident.Runner
}

func newTestClient(c *remote.Client) *testClient { return &testClient{Client: c, run: resident.New(c)} }

func (c *testClient) put(ctx context.Context, name string, kind object.Kind, polys, limbs int, data [][]uint64) (*devicepb.PutResponse, error) {
	put, err := api.NewPut(name, kind, polys, limbs, data, 8)
	if err != nil {
		// Limbs the client library refuses to encode (ragged, say): sent
		// as they are, 8 bytes a word, for the device to refuse.
		put = &devicepb.PutRequest{Name: name, Kind: uint32(kind), Polys: uint32(polys), Limbs: uint32(limbs), WordBytes: 8}
		for _, l := range data {
			b := make([]byte, 8*len(l))
			for j, v := range l {
				binary.LittleEndian.PutUint64(b[8*j:], v)
			}
			put.Data = append(put.Data, b)
		}
	}
	return c.Put(ctx, put)
}

// gotObject is an object a Get returned, decoded.
type gotObject struct {
	Kind         object.Kind
	Polys, Limbs uint32
	Data         [][]uint64
	CRC32C       *uint32
}

func (c *testClient) get(ctx context.Context, name string) (*gotObject, error) {
	return getObject(ctx, c, name)
}

// getObject reads object name from dev, decoded and checked.
func getObject(ctx context.Context, dev api.Device, name string) (*gotObject, error) {
	resp, err := dev.Get(ctx, &devicepb.GetRequest{Name: name})
	if err != nil {
		return nil, err
	}
	kind, data, err := api.ObjectLimbs(resp)
	if err != nil {
		return nil, err
	}
	return &gotObject{Kind: kind, Polys: resp.Polys, Limbs: resp.Limbs, Data: data, CRC32C: resp.Crc32C}, nil
}

func (c *testClient) del(ctx context.Context, name string) error {
	_, err := c.Delete(ctx, &devicepb.DeleteRequest{Name: name})
	return err
}

func (c *testClient) progSet(ctx context.Context, name string, program []byte) error {
	_, err := c.ProgSet(ctx, &devicepb.ProgSetRequest{Name: name, Program: program})
	return err
}

func (c *testClient) recv(ctx context.Context, job uint64, fetch, release bool) (*devicepb.RecvResponse, error) {
	return c.Recv(ctx, &devicepb.RecvRequest{Job: job, Fetch: fetch, Release: release})
}

func (c *testClient) config(ctx context.Context) (*devicepb.ConfigResponse, error) {
	return c.Config(ctx, &devicepb.ConfigRequest{})
}

func (c *testClient) stats(ctx context.Context) (*devicepb.StatsResponse, error) {
	return c.Stats(ctx, &devicepb.StatsRequest{})
}

func (c *testClient) upload(limbs [][]uint64, polys int) (engine.Ref, error) {
	return c.run.Upload(context.Background(), limbs, polys)
}

func (c *testClient) runResident(l *lower.Program, in []engine.Operand, key engine.Operand) (engine.Ref, engine.Stats, error) {
	return c.run.RunResident(context.Background(), l, in, key)
}

func (c *testClient) runLowered(l *lower.Program, in []engine.Operand, key engine.Operand) ([][]uint64, engine.Stats, error) {
	return c.run.RunLowered(context.Background(), l, in, key)
}

func (c *testClient) fetch(ref engine.Ref) ([][]uint64, error) {
	return c.run.Fetch(context.Background(), ref)
}

func (c *testClient) free(refs ...engine.Ref) error { return c.run.Free(context.Background(), refs...) }

// mustPut is the Put of an object given as words (api.NewPut), for tests.
func mustPut(name string, kind object.Kind, polys, limbs int, data [][]uint64, wordBytes int) *devicepb.PutRequest {
	put, err := api.NewPut(name, kind, polys, limbs, data, wordBytes)
	if err != nil {
		panic(err)
	}
	return put
}
