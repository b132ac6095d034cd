package device

import (
	"github.com/prometheus/client_golang/prometheus"
)

// rpcBuckets bound RPC latencies from a millisecond to about 4 minutes.
var rpcBuckets = prometheus.ExponentialBuckets(0.001, 2, 19)

func newRPCSeconds() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rosemary_device_rpc_duration_seconds",
		Help:    "Served RPCs by method and gRPC code: their latency (a query's work is its RunStream).",
		Buckets: rpcBuckets,
	}, []string{"method", "code"})
}

// RegisterMetrics registers the device's metrics with reg (served at
// /metrics by `rosemary device serve --metrics-listen`): RPC latency by
// method, the stream-run queue, runs, bytes read from the store and
// payload bytes over the wire, scrubbed bytes, corruptions found and
// quarantined, copies refused on their checksum.
func (d *Device) RegisterMetrics(reg prometheus.Registerer) error {
	counter := func(name, help string, f func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	gauge := func(name, help string, f func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	for _, c := range []prometheus.Collector{
		d.rpcSeconds,
		gauge("rosemary_device_run_queue_waiting", "Stream runs waiting for admission.", func() int { return d.runs.Stats().Waiting }),
		gauge("rosemary_device_runs_running", "Stream runs running.", func() int { return d.runs.Stats().Running }),
		counter("rosemary_device_runs_total", "Jobs and stream runs executed.", d.jobsRun.Load),
		counter("rosemary_device_store_read_bytes_total", "Bytes read from the store by jobs and stream runs (scanned).", d.storeRead.Load),
		counter("rosemary_device_wire_received_bytes_total", "Request payload bytes received over gRPC.", d.wire.Received),
		counter("rosemary_device_wire_sent_bytes_total", "Reply payload bytes sent over gRPC.", d.wire.Sent),
		counter("rosemary_device_scrubbed_bytes_total", "Payload bytes the scrub read and verified (every page's CRC).", d.scrubbed.Load),
		counter("rosemary_device_scrub_corruptions_total", "Objects the scrub found corrupt (a page failed its CRC).", d.scrubCorrupt.Load),
		counter("rosemary_device_quarantined_objects_total", "Corrupt objects deleted by the scrub, for the cluster to copy back from a healthy replica.", d.quarantined.Load),
		counter("rosemary_device_copy_checksum_failures_total", "Objects copied from another device refused: their checksum did not match the source's.", d.copyCorrupt.Load),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
