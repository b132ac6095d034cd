package e2e

import (
	"sort"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Kinds of the time breakdown (Breakdown). A party charges every instant of
// its session to exactly one kind, the innermost step running (a stack:
// the OT extension a ReLU runs is charged to ot-extension, not to relu), so
// the kinds' wall times add up to the party's session wall time and their
// CPU times to its process CPU time over the session. The HE linear kinds
// carry the layer's variant, e.g. "he:optiencode-bsgs" (what a layer ran:
// a BSGS plan that kept the merge tree is "optiencode").
const (
	KindSetup        = "setup"        // hello, keys, Galois keys, base OTs and the first Ferret iterations
	KindHE           = "he:"          // prefix: a convolution / FC layer, its work not listed below (server: evaluation and output masking; both: sending, receiving)
	KindHEEncode     = ":encode"      // suffix: server: the layer's weight plaintexts (input-independent)
	KindHELoad       = ":load"        // suffix: server: waiting for the layer's weight file (PrepareDir), read one layer ahead
	KindHEEncrypt    = ":encrypt"     // suffix: client: encoding and encrypting its share
	KindHEDecrypt    = ":decrypt"     // suffix: client: decrypting and decoding the outputs
	KindReLU         = "relu"         // ReLU (DReLU, multiplexer, B2A), with a truncation fused into it (nonlinear.ReLUTruncate), millionaires and OT extension excluded
	KindTrunc        = "trunc"        // truncation, standalone or after an average-pool (one fused into a ReLU is relu)
	KindMaxPool      = "maxpool"      // max-pool (comparisons, multiplexers)
	KindAvgPool      = "avgpool"      // average-pool: local sum, then truncation
	KindAdd          = "add"          // residual additions (local)
	KindMillionaires = "millionaires" // the comparison protocol inside ReLU, max-pool and exact truncation
	KindOTExtension  = "ot-extension" // silent-OT pool refills (Ferret iterations), inside any nonlinear step
	KindReveal       = "reveal"       // opening the output to the client, and the server's report
)

// KindStats is one kind's share of one party's session.
type KindStats struct {
	Kind  string  `json:"kind"`
	Calls int     `json:"calls"`
	WallS float64 `json:"wall_s"` // this party's wall clock
	CPUS  float64 `json:"cpu_s"`  // this party's process CPU (user + sys, all threads)
	// WaitS is the part of WallS spent receiving from the peer (blocked on
	// it, then reading the frame: the transport's waits).
	WaitS float64 `json:"wait_s"`
}

// PartyBreakdown is one party's session split by kind.
type PartyBreakdown struct {
	WallS float64     `json:"wall_s"` // the session as this party measured it (= Σ kinds' wall)
	CPUS  float64     `json:"cpu_s"`  // its process CPU over the session (= Σ kinds' CPU)
	WaitS float64     `json:"wait_s"` // Σ kinds' waits
	Kinds []KindStats `json:"kinds"`  // by decreasing CPU time
}

// Breakdown is where the time went, per kind, for both parties. With both
// parties in one process (RunPipe), each party's CPU times are the
// process's, both parties' work mixed.
type Breakdown struct {
	Server PartyBreakdown `json:"server"`
	Client PartyBreakdown `json:"client"`
}

// Kind returns the party's entry for kind (zero if absent).
func (pb PartyBreakdown) Kind(kind string) KindStats {
	for _, k := range pb.Kinds {
		if k.Kind == kind {
			return k
		}
	}
	return KindStats{Kind: kind}
}

// profiler charges one party's time to the innermost running kind.
type profiler struct {
	conn  *transport.Conn
	stack []string
	kinds map[string]*KindStats
	// the last mark
	t    time.Time
	cpu  time.Duration
	wait time.Duration
	// the start
	t0    time.Time
	cpu0  time.Duration
	wait0 time.Duration
}

func newProfiler(conn *transport.Conn, first string) *profiler {
	pr := &profiler{conn: conn, kinds: map[string]*KindStats{}}
	pr.t, pr.cpu, pr.wait = pr.now()
	pr.t0, pr.cpu0, pr.wait0 = pr.t, pr.cpu, pr.wait
	pr.stack = []string{first}
	pr.get(first).Calls++
	return pr
}

func (pr *profiler) now() (time.Time, time.Duration, time.Duration) {
	cpu, _ := processCPU()
	return time.Now(), cpu, pr.conn.RecvWait()
}

func (pr *profiler) get(kind string) *KindStats {
	k, ok := pr.kinds[kind]
	if !ok {
		k = &KindStats{Kind: kind}
		pr.kinds[kind] = k
	}
	return k
}

// mark charges the time since the last mark to the running kind.
func (pr *profiler) mark() {
	t, cpu, wait := pr.now()
	k := pr.get(pr.stack[len(pr.stack)-1])
	k.WallS += t.Sub(pr.t).Seconds()
	k.CPUS += (cpu - pr.cpu).Seconds()
	k.WaitS += (wait - pr.wait).Seconds()
	pr.t, pr.cpu, pr.wait = t, cpu, wait
}

// push starts a kind inside the running one; pop ends it.
func (pr *profiler) push(kind string) {
	pr.mark()
	pr.stack = append(pr.stack, kind)
	pr.get(kind).Calls++
}

func (pr *profiler) pop() {
	pr.mark()
	if len(pr.stack) > 1 {
		pr.stack = pr.stack[:len(pr.stack)-1]
	}
}

// switchTo replaces the running kind (at the bottom of the stack).
func (pr *profiler) switchTo(kind string) {
	pr.mark()
	pr.stack = append(pr.stack[:0], kind)
	pr.get(kind).Calls++
}

// trace is the nonlinear.Party tracing callback.
func (pr *profiler) trace(step string) func() {
	pr.push(step)
	return pr.pop
}

// finish closes the profile: its totals are the span from the start to now.
func (pr *profiler) finish() PartyBreakdown {
	pr.mark()
	pb := PartyBreakdown{WallS: pr.t.Sub(pr.t0).Seconds(), CPUS: (pr.cpu - pr.cpu0).Seconds(), WaitS: (pr.wait - pr.wait0).Seconds()}
	for _, k := range pr.kinds {
		pb.Kinds = append(pb.Kinds, *k)
	}
	sort.Slice(pb.Kinds, func(i, j int) bool {
		if pb.Kinds[i].CPUS != pb.Kinds[j].CPUS {
			return pb.Kinds[i].CPUS > pb.Kinds[j].CPUS
		}
		return pb.Kinds[i].Kind < pb.Kinds[j].Kind
	})
	return pb
}
