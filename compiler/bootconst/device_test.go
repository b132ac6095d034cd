package bootconst_test

import (
	"context"
	"net"
	"testing"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/resident"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// TestBootstrapOnDeviceDaemon runs the whole bootstrapping on a device
// daemon over gRPC in resident mode (values stay on the device between
// operations; named constants, mixed-degree additions and ModRaise go as
// lowered programs, the DFT products node by node) and decrypts it.
func TestBootstrapOnDeviceDaemon(t *testing.T) {
	f := newFixture(t, 6)
	want, ct := f.message(t)
	p := f.program(t)
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 4, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- device.Serve(ctx, d, lis, device.WithPlaintext()) }()
	defer func() {
		cancel()
		<-served
	}()
	c, err := remote.Dial(lis.Addr().String(), remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	x, err := f.ks.Executor(allOnDevice, true) // resident mode runs the DFTs node by node
	if err != nil {
		t.Fatal(err)
	}
	x.Device = resident.New(c)
	e := f.maxErr(t, f.exec(t, x, p, ct), want)
	t.Logf("device daemon: %d device ops, %d micro-ops, %d B to the device (%d B of keys), %d B back; max error %.3g",
		x.Stats.DeviceOps, x.Stats.DeviceMicroOps, x.Stats.BytesToDevice, x.Stats.KeyBytesToDevice, x.Stats.BytesFromDevice, e)
	if e > 1e-3 {
		t.Fatalf("bootstrapping on the device daemon: max error %.3g", e)
	}
}
