package device

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/device/api"
	pb "github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// FuzzServedRequests feeds arbitrary bytes, as every request the device
// takes as its message (the contract's own type, checked by the device),
// through the served device to execution: it answers or refuses with a
// named error (a sentinel of the error table), never panics, and keeps
// serving. CopyFrom is left out: it dials its source.
func FuzzServedRequests(f *testing.F) {
	for _, m := range []proto.Message{
		&pb.ConfigRequest{}, &pb.DeleteRequest{Name: "db/x"}, &pb.ReleaseRequest{Jobs: []uint64{1, 2}},
		&pb.ProgSetRequest{Name: "p", Program: []byte("RSMP....")}, &pb.SetStreamRequest{Name: "s", Program: []byte(`{"nodes":[]}`)},
		&pb.ListRequest{Prefix: "db/", MaxObjects: 3}, &pb.GrantRequest{Database: "db", Identity: "bob", Role: pb.Role_ROLE_READER},
		&pb.GrantRequest{Identity: "bob", Role: pb.Role_ROLE_READER}, // no database: refused, named (found by this fuzzer)
		&pb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 1024, RecordSize: 44, Generation: "db/g1.ab", Keys: "db/members/me/keys/k/lwe-ff/",
			Query: make([]byte, 4096), Secret: make([]byte, 64)},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	st, err := store.Open(f.TempDir(), layout.Layout{Channels: 2, PageSize: 4096})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	d, err := New(st, DefaultLimits())
	if err != nil {
		f.Fatal(err)
	}
	srv := api.NewServer(d)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		try := func(name string, m proto.Message, call func() error) {
			if proto.Unmarshal(data, m) != nil {
				return
			}
			if err := call(); err != nil && api.Sentinel(err) == nil {
				t.Fatalf("%s: an error outside the table: %v", name, err)
			}
		}
		var (
			config  pb.ConfigRequest
			del     pb.DeleteRequest
			release pb.ReleaseRequest
			progSet pb.ProgSetRequest
			set     pb.SetStreamRequest
			list    pb.ListRequest
			grant   pb.GrantRequest
			query   pb.LWEQueryRequest
		)
		try("Config", &config, func() error { _, err := srv.Config(ctx, &config); return err })
		try("Delete", &del, func() error { _, err := srv.Delete(ctx, &del); return err })
		try("Release", &release, func() error { _, err := srv.Release(ctx, &release); return err })
		try("ProgSet", &progSet, func() error { _, err := srv.ProgSet(ctx, &progSet); return err })
		try("SetStream", &set, func() error { _, err := srv.SetStream(ctx, &set); return err })
		try("List", &list, func() error { _, err := srv.List(ctx, &list); return err })
		try("Grant", &grant, func() error { _, err := srv.Grant(ctx, &grant); return err })
		try("QueryLWE", &query, func() error { _, err := srv.QueryLWE(ctx, &query); return err })
		if _, err := srv.Config(ctx, &pb.ConfigRequest{}); err != nil {
			t.Fatalf("the device stopped serving: %v", err)
		}
	})
}
