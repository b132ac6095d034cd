package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/cluster/chaos"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/tools/bench"
)

func init() {
	register(command{name: "chaos", summary: "a local cluster under a seeded fault schedule (kills, pauses, flipped pages, wipes, etcd members and quorum, concurrent loads, full disks), every answer checked: --devices 5 --etcd 3 --duration 10m [--seed S] [--json]", run: runChaos})
}

func runChaos(args []string) error {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	devices := fs.Int("devices", 5, "device processes")
	members := fs.Int("etcd", 3, "etcd members (odd), in this process")
	duration := fs.Duration("duration", 10*time.Minute, "inject faults for this long (0: --rounds rounds without pause)")
	rounds := fs.Int("rounds", 36, "rounds of every fault track, paced over --duration (a round: one fault of each of the track's kinds)")
	seed := fs.Uint64("seed", 0, "the schedule's seed (0: a random one, printed)")
	scheme := fs.String("scheme", "lwe", "the shards' PIR scheme: lwe or bgv")
	shards := fs.Int("shards", 2, "shards of the database")
	replicas := fs.Int("replicas", 2, "replicas of every shard")
	records := fs.Int("records", 512, "records of every generation")
	recordSize := fs.Int("record-size", 256, "bytes per record")
	disk := fs.String("disk", "256MiB", "each device's filesystem: a tmpfs of this size (needs root; full-disk faults are skipped without; 0: none)")
	dir := fs.String("dir", "", "directory of the run: certificates, stores, etcd data, logs (default: a new temporary directory, removed after a run without anomalies)")
	plaintext := fs.Bool("insecure-plaintext", false, "devices serve plaintext on loopback (default: mutual TLS with the run's certificates; etcd is always on TLS with RBAC)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc, err := client.ParsePIRScheme(*scheme)
	if err != nil {
		return err
	}
	var diskBytes int64
	if *disk != "0" {
		if diskBytes, err = bench.ParseSize(*disk); err != nil {
			return err
		}
	}
	if *seed == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		*seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	temp := *dir == ""
	if temp {
		if *dir, err = os.MkdirTemp("", "rosemary-chaos-"); err != nil {
			return err
		}
	}
	serve, err := childDeviceCommand()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "chaos: seed %d, %d devices, %d etcd members, %v of faults; run directory %s\n", *seed, *devices, *members, *duration, *dir)
	ctx, stop := untilInterrupted()
	defer stop()
	rep, err := chaos.Run(ctx, chaos.Config{
		Dir: *dir, Devices: *devices, EtcdMembers: *members, Duration: *duration, Rounds: *rounds, Seed: *seed,
		Shards: *shards, Replicas: *replicas, Records: *records, RecordSize: *recordSize, Scheme: sc,
		DiskBytes: diskBytes, PlaintextDevices: *plaintext, DeviceMetrics: true, Log: os.Stderr,
		Device: func(s chaos.DeviceSpec) *exec.Cmd {
			args := append(append([]string(nil), serve[1:]...), "--store", s.Store, "--listen", "127.0.0.1:0",
				"--etcd", strings.Join(s.Etcd, ","), "--id", s.ID, "--scrub-interval", s.Scrub.String())
			if s.Metrics != "" {
				args = append(args, "--metrics-listen", s.Metrics)
			}
			if s.Plaintext {
				args = append(args, "--insecure-plaintext")
			} else {
				f := certs.InDir(s.PKI, s.ID)
				args = append(args, "--cert-file", f.Cert, "--key-file", f.Key, "--trusted-ca-file", f.CA)
			}
			return exec.Command(serve[0], args...)
		},
		// Each etcd member a process of this binary: a stopped member is
		// killed, as a crash would end it.
		EtcdMember: func(args []string) *exec.Cmd {
			cmd := exec.Command(serve[0], append([]string{"cluster", "etcd-member"}, args...)...)
			cmd.Stderr = os.Stderr
			return cmd
		},
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Print(rep.Summary())
	}
	if len(rep.Anomalies) > 0 {
		return fmt.Errorf("chaos: %d anomalies (seed %d; the devices' logs are in %s/logs)", len(rep.Anomalies), *seed, *dir)
	}
	if temp {
		os.RemoveAll(*dir)
	}
	return nil
}
