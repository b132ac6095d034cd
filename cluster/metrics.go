package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what a cluster client (a user's, or the coordinator's)
// counts; RegisterMetrics exposes them.
type metrics struct {
	querySeconds *prometheus.HistogramVec // by operation: get, nearest
	queryBytes   prometheus.Counter
	failovers    prometheus.Counter
	hedges       prometheus.Counter
	repairs      prometheus.Counter
	loads        *prometheus.CounterVec // by outcome
	loadRebases  prometheus.Counter
	swept        prometheus.Counter
	reconciled   prometheus.Counter
	breakerOpens prometheus.Counter
}

func newMetrics() *metrics {
	return &metrics{
		querySeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rosemary_cluster_query_duration_seconds",
			Help:    "Cluster queries (every shard answered), by operation: their latency.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 19),
		}, []string{"op"}),
		queryBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_query_bytes_total",
			Help: "Bytes between this client and the devices for the queries that succeeded (queries up, answers down)."}),
		failovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_failovers_total",
			Help: "Shard queries that failed on a replica and went on to the next."}),
		hedges: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_hedges_total",
			Help: "Shard queries also sent to the next replica because the first took longer than the recent 95th percentile."}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_repairs_total",
			Help: "Shard replicas copied device to device (re-replication and rebalancing)."}),
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rosemary_cluster_loads_total",
			Help: "Loads by outcome: published, concurrent (another load published first), failed."}, []string{"outcome"}),
		loadRebases: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_load_rebases_total",
			Help: "Loads that published over a map a repair had re-placed meanwhile (same generation, replicas moved)."}),
		swept: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_swept_shards_total",
			Help: "Stale shard databases removed from devices (old generations, loads that failed or lost)."}),
		reconciled: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_reconciled_replicas_total",
			Help: "Shard replicas found short on their device (wiped, partly copied, a corrupt object quarantined) and copied again."}),
		breakerOpens: prometheus.NewCounter(prometheus.CounterOpts{Name: "rosemary_cluster_breaker_opens_total",
			Help: "Times a device failed often enough in a row to be asked last (its circuit opened)."}),
	}
}

// RegisterMetrics registers the client's metrics with reg (the
// coordinator serves them at /metrics: `rosemary cluster up
// --metrics-listen`): query latency by operation, query bytes, failovers,
// hedges, repairs, loads by outcome, loads published over a repair,
// swept shards, replicas reconciled,
// circuits opened.
func (c *Client) RegisterMetrics(reg prometheus.Registerer) error {
	m := c.metrics
	for _, col := range []prometheus.Collector{m.querySeconds, m.queryBytes, m.failovers, m.hedges, m.repairs, m.loads, m.loadRebases, m.swept, m.reconciled, m.breakerOpens} {
		if err := reg.Register(col); err != nil {
			return err
		}
	}
	return nil
}

func (m *metrics) query(op string, start time.Time) {
	m.querySeconds.WithLabelValues(op).Observe(time.Since(start).Seconds())
}
