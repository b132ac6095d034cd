package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rosemary-fhe/rosemary/internal/metrics"
)

// serveMetrics serves, if addr is set, what register registers (and the
// Go runtime's and the process's metrics) at http://addr/metrics, on
// loopback only; stop ends it.
func serveMetrics(addr string, register func(prometheus.Registerer) error) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, err
	}
	if err := register(reg); err != nil {
		return nil, err
	}
	s, err := metrics.Listen(addr, reg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "metrics at http://%s/metrics\n", s.Addr())
	return func() { s.Close() }, nil
}
