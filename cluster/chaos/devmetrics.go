package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rosemary-fhe/rosemary/cluster/local"
)

// deviceCounters are the device metrics a run sums over its devices (each
// read from its /metrics before a kill ends the process that counted, and
// at the end).
var deviceCounters = []string{
	"rosemary_device_runs_total",
	"rosemary_device_store_read_bytes_total",
	"rosemary_device_wire_received_bytes_total",
	"rosemary_device_wire_sent_bytes_total",
	"rosemary_device_scrubbed_bytes_total",
	"rosemary_device_scrub_corruptions_total",
	"rosemary_device_quarantined_objects_total",
	"rosemary_device_copy_checksum_failures_total",
}

// scrapeDevice adds d's counters since its start to the report (a device
// that does not answer in time adds nothing: a paused one, say).
func (r *run) scrapeDevice(ctx context.Context, d *device) {
	if d.spec.Metrics == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.spec.Metrics+"/metrics", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		r.anomaly("device %s's metrics: %v", d.spec.ID, err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range deviceCounters {
		f, ok := fams[name]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			if c := m.GetCounter(); c != nil {
				r.rep.DeviceCounters[strings.TrimSuffix(strings.TrimPrefix(name, "rosemary_device_"), "_total")] += c.GetValue()
			}
		}
	}
}

// metricsAddrs are free loopback addresses for the devices' /metrics.
func metricsAddrs(n int) ([]string, error) {
	ports, err := local.FreePorts(n)
	if err != nil {
		return nil, fmt.Errorf("chaos: metrics ports: %w", err)
	}
	for i := range ports {
		ports[i] = "127.0.0.1:" + ports[i]
	}
	return ports, nil
}
