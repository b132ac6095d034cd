package run

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// runPIR is `rosemary run -w pir`: a seeded database of Options.PIRRecords
// records on the device (written into the in-process device's store, or
// uploaded to a remote one), queried at random indices (the first and last
// included) with the expanded-query PIR on bgv-13, every record checked.
func runPIR(ctx context.Context, c *remote.Client, st *store.Store, own func(db string) error, opts Options, queries int) (*Report, error) {
	start := time.Now()
	preset, err := fhe.Lookup("bgv-13")
	if err != nil {
		return nil, err
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return nil, err
	}
	shape, err := pir.NewShape(params, opts.PIRRecordSize, opts.PIRRecords)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	const seed = 1
	sink := client.DeviceSink(c)
	if st != nil {
		sink = storeSink(st)
	}
	s0, r0 := c.Traffic()
	dbBytes, err := client.WriteSeededPIR(ctx, sink, opts.Prefix, shape, seed, nil)
	if err != nil {
		return nil, err
	}
	if st != nil {
		if err := own(opts.Prefix); err != nil {
			return nil, err
		}
	}
	sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
	sess, err := programs.NewPIRSession(ctx, c, opts.Prefix, preset, shape, sk)
	if err != nil {
		return nil, err
	}
	s1, r1 := c.Traffic()
	rep := &Report{Workload: "pir", Placement: "plan", Queries: queries, Correct: true, Params: preset.Name,
		HostOnlyBytes: dbBytes, SetupBytes: s1 - s0 + r1 - r0, PlanCutBytes: sess.Plan.CutBytes, PlanHostOnly: sess.Plan.HostOnlyBytes}
	if sess.OnDevice() {
		rep.Segments = "stream"
	} else {
		rep.Segments = "host scan"
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	for q := 0; q < queries; q++ {
		idx := rng.IntN(shape.Records)
		switch q {
		case 0:
			idx = 0
		case 1:
			idx = shape.Records - 1
		}
		a0, b0 := c.Traffic()
		res, err := sess.Get(ctx, idx)
		if err != nil {
			return nil, err
		}
		a1, b1 := c.Traffic()
		rep.HostDeviceBytes += a1 - a0 + b1 - b0
		ct := res.QueryBytes + res.AnswerBytes
		if res.Measured { // those are the connection's bytes; the ciphertexts are these
			ct = res.PayloadBytes
		}
		rep.CiphertextBytes += ct + res.PulledBytes
		want, err := client.SeededRecord(seed, shape, idx)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(res.Record, want) && rep.Correct {
			rep.Correct, rep.Error = false, fmt.Sprintf("record %d differs", idx)
		}
		if res.Device != nil {
			rep.DeviceStoreBytes += int64(res.Device.StoreBytes)
			rep.DeviceMicroOps += int64(res.Device.MicroOps)
		}
	}
	n := int64(queries)
	rep.HostDeviceBytes /= n
	rep.CiphertextBytes /= n
	rep.DeviceStoreBytes /= n
	rep.DeviceMicroOps /= n
	if rep.HostDeviceBytes > 0 {
		rep.Ratio = float64(rep.HostOnlyBytes) / float64(rep.HostDeviceBytes)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// storeSink writes a database's objects straight into the in-process
// device's store (before any query: the store is not in ISP mode).
func storeSink(st *store.Store) client.ObjectSink {
	return func(_ context.Context, name string, shape object.Shape, raw [][]byte) error {
		_, err := st.Put(name, object.KindPlaintext, shape, raw)
		return err
	}
}
