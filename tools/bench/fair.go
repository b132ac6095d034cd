package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// FairOptions configure RunFair: one identity loops queries over a large
// database while another queries a small one, on one device.
type FairOptions struct {
	PIROptions       // the large database (Size, RecordSize, Seed, StoreDir, DeviceCommand)
	SmallSize  int64 // the small database's bytes
	Light      int   // the small database's queries, alone and under load
}

// FairReport is what `rosemary bench fair --json` prints; every figure is
// measured in the run.
type FairReport struct {
	Transport  string `json:"transport"`
	BigBytes   int64  `json:"big_db_bytes"`
	SmallBytes int64  `json:"small_db_bytes"`
	// The small database's query time (mean, seconds) alone and while
	// the other identity loops queries over the large one. Alone is the
	// mean of a round before the loop and one after it (on a shared
	// host, a drift in the host's load between the rounds then weighs
	// on both sides); each round is also reported.
	LightAloneS     float64 `json:"light_alone_s"`
	LightBeforeS    float64 `json:"light_alone_before_s"`
	LightAfterS     float64 `json:"light_alone_after_s"`
	LightUnderLoadS float64 `json:"light_under_load_s"`
	Ratio           float64 `json:"ratio"` // under load / alone
	// The same on the device alone (its RunStream time): client and
	// device share this machine's cores, so the end-to-end figures also
	// charge the load to the client's encryption and decryption.
	LightAloneDeviceS     float64 `json:"light_alone_device_s"`
	LightUnderLoadDeviceS float64 `json:"light_under_load_device_s"`
	DeviceRatio           float64 `json:"device_ratio"`
	HeavyQueries          int     `json:"heavy_queries"`
	HeavyMeanS            float64 `json:"heavy_mean_s"`
	Correct               bool    `json:"correct"`
	Provenance            string  `json:"provenance"`
}

const smallDB = "small"

// lightUser is the second identity of the fairness benchmark.
const lightUser = "bench-light"

// RunFair measures fair admission: the small database's query time alone,
// then while benchUser loops queries over the large one, then alone again;
// both answers are checked record for record.
func RunFair(ctx context.Context, opt FairOptions) (*FairReport, error) {
	logf, progress := orQuiet(opt.Log, opt.Progress)
	if opt.Plaintext {
		return nil, errors.New("bench: admission is fair per identity, and a plaintext device sees one: run with TLS")
	}
	if opt.Light < 1 {
		return nil, fmt.Errorf("bench: %d small queries", opt.Light)
	}
	if opt.Preset == "" {
		opt.Preset = "bgv-13"
	}
	preset, err := fhe.Lookup(opt.Preset)
	if err != nil {
		return nil, err
	}
	params, err := preset.BGVParameters()
	if err != nil {
		return nil, err
	}
	shapeOf := func(size int64) (pir.Shape, error) {
		perPt := int64(2 * params.N())
		if size < perPt || opt.RecordSize < 1 || int64(opt.RecordSize) > perPt {
			return pir.Shape{}, fmt.Errorf("bench: a database of %d bytes with %d-byte records", size, opt.RecordSize)
		}
		return pir.NewShape(params, opt.RecordSize, int(size/perPt)*(int(perPt)/opt.RecordSize))
	}
	big, err := shapeOf(opt.Size)
	if err != nil {
		return nil, err
	}
	small, err := shapeOf(opt.SmallSize)
	if err != nil {
		return nil, err
	}
	rep := &FairReport{BigBytes: opt.Size, SmallBytes: opt.SmallSize, Provenance: "measured here"}
	prep := &PIRReport{DBBytes: opt.Size}
	want := manifest{Size: opt.Size, RecordSize: opt.RecordSize, Seed: opt.Seed, Preset: preset.Name, Shape: big, TileRows: client.PIRTileRows}
	if err := buildStore(ctx, opt.PIROptions, want, prep, progress, logf); err != nil {
		return nil, err
	}
	if err := writeSmall(ctx, opt.StoreDir, small, opt.Seed+1); err != nil {
		return nil, err
	}
	certDir := filepath.Join(filepath.Dir(filepath.Clean(opt.StoreDir)), "certs")
	opt.Device = ""
	addr, dial, transport, stop, err := startDevice(ctx, opt.PIROptions, logf)
	if err != nil {
		return nil, err
	}
	defer stop()
	rep.Transport = transport
	if err := certs.Issue(certDir, lightUser, certs.RoleUser, nil); err != nil {
		return nil, err
	}
	lightCfg, err := certs.ClientConfig(certs.InDir(certDir, lightUser))
	if err != nil {
		return nil, err
	}
	lightDial := []remote.Option{remote.WithTLS(lightCfg)}
	session := func(dial []remote.Option, db string, shape pir.Shape) (*client.PIRSession, func(), error) {
		c, err := remote.Dial(addr, dial...)
		if err != nil {
			return nil, nil, err
		}
		sk := rlwe.NewKeyGenerator(params).GenSecretKeyNew()
		s, err := client.NewPIRSession(ctx, c, db, preset, shape, sk)
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("bench: session on %s: %w", db, err)
		}
		return s, func() { c.Close() }, nil
	}
	heavy, closeHeavy, err := session(dial, benchDB, big)
	if err != nil {
		return nil, err
	}
	defer closeHeavy()
	light, closeLight, err := session(lightDial, smallDB, small)
	if err != nil {
		return nil, err
	}
	defer closeLight()
	rep.Correct = true
	rng := rand.New(rand.NewPCG(opt.Seed, 0xfa1))
	query := func(s *client.PIRSession, shape pir.Shape, seed uint64) (*client.PIRQuery, error) {
		idx := rng.IntN(shape.Records)
		q, err := s.Get(ctx, idx)
		if err != nil {
			return nil, err
		}
		wantRec, err := client.SeededRecord(seed, shape, idx)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(q.Record, wantRec) {
			rep.Correct = false
		}
		return q, nil
	}
	lightRound := func(label string) (wall, dev float64, err error) {
		for i := 0; i < opt.Light; i++ {
			q, err := query(light, small, opt.Seed+1)
			if err != nil {
				return 0, 0, err
			}
			wall += q.Seconds
			if q.Device != nil {
				dev += q.Device.Seconds
			}
			logf("%s: small query %d in %.3f s", label, i, q.Seconds)
		}
		return wall / float64(opt.Light), dev / float64(opt.Light), nil
	}
	if _, err := query(light, small, opt.Seed+1); err != nil { // warm: plan and keys set
		return nil, err
	}
	if rep.LightAloneS, rep.LightAloneDeviceS, err = lightRound("alone"); err != nil {
		return nil, err
	}
	// The heavy identity loops; the light one starts while a heavy run is
	// going (the heavy query's upload and expansion take well over the
	// pause), and the loop stops after the light round.
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var heavyErr error
	var heavySum float64
	wg.Add(1)
	go func() {
		defer wg.Done()
		hrng := rand.New(rand.NewPCG(opt.Seed, 0x4ea))
		for hctx.Err() == nil {
			q, err := heavy.Get(hctx, hrng.IntN(big.Records))
			if err != nil {
				if hctx.Err() == nil {
					heavyErr = err
				}
				return
			}
			rep.HeavyQueries++
			heavySum += q.Seconds
		}
	}()
	time.Sleep(300 * time.Millisecond)
	rep.LightUnderLoadS, rep.LightUnderLoadDeviceS, err = lightRound("under load")
	cancel()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if heavyErr != nil {
		return nil, fmt.Errorf("bench: the looping identity's query: %w", heavyErr)
	}
	if rep.HeavyQueries > 0 {
		rep.HeavyMeanS = heavySum / float64(rep.HeavyQueries)
	}
	// Alone again, once the loop has stopped.
	after, afterDev, err := lightRound("alone after")
	if err != nil {
		return nil, err
	}
	rep.LightBeforeS, rep.LightAfterS = rep.LightAloneS, after
	rep.LightAloneS = (rep.LightAloneS + after) / 2
	rep.LightAloneDeviceS = (rep.LightAloneDeviceS + afterDev) / 2
	rep.Ratio = rep.LightUnderLoadS / rep.LightAloneS
	if rep.LightAloneDeviceS > 0 {
		rep.DeviceRatio = rep.LightUnderLoadDeviceS / rep.LightAloneDeviceS
	}
	return rep, nil
}

// writeSmall writes the small database into the store beside the large
// one and makes lightUser its owner (benchUser owns the large one).
func writeSmall(ctx context.Context, dir string, shape pir.Shape, seed uint64) error {
	st, err := store.Open(dir, layout.Layout{})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := client.WriteSeededPIR(ctx, storeSink(st), smallDB, shape, seed, nil); err != nil {
		return err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return err
	}
	return errors.Join(d.SaveACL(smallDB, &authz.ACL{Owner: lightUser}), d.SaveACL(benchDB, &authz.ACL{Owner: benchUser}))
}
