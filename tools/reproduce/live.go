package reproduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/tools/report"
)

// Live is the evaluation page of a run in progress: figures fill in as
// they complete, with the progress on top. It is an http.Handler serving
// the page (read-only: GET or HEAD of / or /index.html, nothing else).
type Live struct {
	command, commit string
	figs            []Figure

	mu          sync.Mutex
	sections    []report.Section
	results     []*Result
	done, total int
	finished    bool
	failed      error
}

// RefreshSeconds is how often a page still filling in reloads itself.
const RefreshSeconds = 3

// NewLive starts the page of a run of figs, every figure pending.
func NewLive(command, commit string, figs []Figure) *Live {
	l := &Live{command: command, commit: commit, figs: figs, sections: make([]report.Section, len(figs)), results: make([]*Result, len(figs))}
	for i, f := range figs {
		l.sections[i], _ = Section(f, nil)
	}
	return l
}

// Progress records the simulations done and known (Options.Progress).
func (l *Live) Progress(done, total int) {
	l.mu.Lock()
	l.done, l.total = done, total
	l.mu.Unlock()
}

// Complete fills in figure f (rendering its chart).
func (l *Live) Complete(f Figure, res *Result) error {
	i := slices.IndexFunc(l.figs, func(g Figure) bool { return g.ID == f.ID })
	if i < 0 {
		return fmt.Errorf("reproduce: figure %s is not on the page", f.ID)
	}
	s, err := Section(f, res)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.sections[i], l.results[i] = s, res
	l.mu.Unlock()
	return nil
}

// Finish ends the run: the page stops reloading, and says so if err is
// not nil.
func (l *Live) Finish(err error) {
	l.mu.Lock()
	l.finished, l.failed = true, err
	l.mu.Unlock()
}

// Page is the page as it stands.
func (l *Live) Page() *report.Page {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := PageOf(l.command, l.commit, slices.Clone(l.sections), slices.Clone(l.results))
	completed := 0
	for _, r := range l.results {
		if r != nil {
			completed++
		}
	}
	switch {
	case l.failed != nil:
		p.Progress = fmt.Sprintf("The run failed: %v. %d of %d figures completed.", l.failed, completed, len(l.figs))
	case !l.finished:
		p.Progress = fmt.Sprintf("Running: %d of %d figures completed, %d of %d simulations so far (this page reloads every %d s).",
			completed, len(l.figs), l.done, l.total, RefreshSeconds)
		p.Done, p.Total, p.RefreshSeconds = l.done, max(l.total, 1), RefreshSeconds
	}
	return p
}

// ServeHTTP serves the page.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "read-only: GET or HEAD", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path != "/" && r.URL.Path != "/index.html" {
		http.NotFound(w, r)
		return
	}
	var b bytes.Buffer
	if err := l.Page().HTML(&b); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Everything is inline; the page may fetch nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b.Bytes())
}

// Serve serves h on lis until ctx ends, then shuts the server down.
func Serve(ctx context.Context, lis net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 8 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("reproduce: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reproduce: serve: %w", err)
	}
	return nil
}
