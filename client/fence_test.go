package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// barrierReader holds its first Read until every reader of its group has
// been read once: the loads reading them have all read the manifest
// before any writes a record.
type barrierReader struct {
	r     io.Reader
	once  sync.Once
	group *sync.WaitGroup
}

func (b *barrierReader) Read(p []byte) (int, error) {
	b.once.Do(func() {
		b.group.Done()
		b.group.Wait()
	})
	return b.r.Read(p)
}

// Two loads of one database run at once, with different records: one
// publishes, whole; the other fails with ErrConcurrentLoad; every record
// of the published generation is the winner's, and the loser's data is
// gone from the store.
func TestConcurrentLoadsOneWins(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 64, 32
	if _, err := e.c.CreatePIR(ctx, "db", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "db", bytes.NewReader(records(60, n, size)), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	data := [2][]byte{records(61, n, size), records(62, n, size)}
	var group, wg sync.WaitGroup
	group.Add(2)
	var infos [2]*client.Info
	var errs [2]error
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			infos[k], errs[k] = e.c.Load(ctx, "db", &barrierReader{r: bytes.NewReader(data[k]), group: &group}, client.LoadOptions{Records: dataset.FixedSize})
		}()
	}
	wg.Wait()
	winner := -1
	for k := range 2 {
		switch {
		case errs[k] == nil && winner < 0:
			winner = k
		case errs[k] == nil:
			t.Fatal("both loads published")
		case !errors.Is(errs[k], client.ErrConcurrentLoad):
			t.Fatalf("load %d: %v, want ErrConcurrentLoad", k, errs[k])
		}
	}
	if winner < 0 {
		t.Fatalf("no load published: %v; %v", errs[0], errs[1])
	}
	in, err := e.c.Info(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if in.Generation != 2 || in.Token != infos[winner].Token || in.Records != n {
		t.Fatalf("published %+v, the winner's is %+v", in, infos[winner])
	}
	for i := range n {
		got, err := e.c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[winner][i*size:(i+1)*size]) {
			t.Fatalf("record %d is not load %d's", i, winner)
		}
	}
	all, own := countObjects(t, e.c, "db/g"), countObjects(t, e.c, fmt.Sprintf("db/g2.%s/", in.Token))
	if all != own || own == 0 {
		t.Fatalf("%d data objects, %d of them the published generation's", all, own)
	}
}

// Creating a database that exists fails, however close the two creates.
func TestCreateIsCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	var wg sync.WaitGroup
	var errs [4]error
	for k := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[k] = e.c.CreatePIR(ctx, "db", 32+k, client.PIROptions{})
		}()
	}
	wg.Wait()
	created := 0
	for k, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, client.ErrExists):
			t.Fatalf("create %d: %v", k, err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of 4 concurrent creates succeeded, want 1", created)
	}
}

// racingRemover is a device on which another load publishes first (the
// manifest's compare-and-swap fails) and removes what it supersedes while
// this one cleans up: between this load's List and its Deletes, the first
// object listed is gone.
type racingRemover struct {
	api.Device
}

func (d *racingRemover) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if req.Name == objname.Manifest("db") && req.IfGeneration != nil {
		return nil, fmt.Errorf("device: %w: another load published", api.ErrStale)
	}
	return d.Device.Put(ctx, req)
}

func (d *racingRemover) List(ctx context.Context, req *devicepb.ListRequest) (*devicepb.ListResponse, error) {
	resp, err := d.Device.List(ctx, req)
	if err == nil && strings.HasPrefix(req.Prefix, "db/g2.") && len(resp.Objects) > 1 {
		d.Device.Delete(ctx, &devicepb.DeleteRequest{Name: resp.Objects[0].Name})
	}
	return resp, err
}

// A load that loses to a concurrent one removes everything it wrote, even
// when the winner's removal of superseded data takes some of it first (it
// stopped at the first object already gone, and left the rest: a flake of
// TestConcurrentLoadsOneWins on a busy machine).
func TestLosingLoadRemovesItsDataWhateverIsGone(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 64, 32
	if _, err := e.c.CreatePIR(ctx, "db", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	first := records(70, n, size)
	if _, err := e.c.Load(ctx, "db", bytes.NewReader(first), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	before := countObjects(t, e.c, "db/g")
	loser := client.New(&racingRemover{Device: e.c.Device()}, e.keys)
	_, err := loser.Load(ctx, "db", bytes.NewReader(records(71, n, size)), client.LoadOptions{Records: dataset.FixedSize})
	if !errors.Is(err, client.ErrConcurrentLoad) {
		t.Fatalf("the losing load: %v, want ErrConcurrentLoad", err)
	}
	if got := countObjects(t, e.c, "db/g2."); got != 0 {
		t.Fatalf("%d objects of the losing load remain", got)
	}
	if got := countObjects(t, e.c, "db/g"); got != before {
		t.Fatalf("%d data objects after the losing load, %d before", got, before)
	}
	for _, i := range []int{0, n - 1} {
		got, err := e.c.Get(ctx, "db", i)
		if err != nil || !bytes.Equal(got, first[i*size:(i+1)*size]) {
			t.Fatalf("record %d after the losing load: %v", i, err)
		}
	}
}
