package device

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rosemary-fhe/rosemary/device/store"
)

// ScrubReport is what one scrub pass did.
type ScrubReport struct {
	Objects int      // objects read whole
	Bytes   int64    // payload bytes read and verified
	Corrupt []string // objects whose pages failed their CRCs: quarantined (deleted)
}

// Scrub reads every stored object page by page, verifying each page's
// CRC-32C, generation and page number — the check a query's scan skips
// for LWE databases (store.Object.ScanLimb), so bit rot there is found
// here. An object that fails is quarantined: deleted, if no write
// replaced it meanwhile, so that no query reads it again (a query on it
// fails NotFound and the cluster client asks another replica) and the
// cluster's reconcile, finding the replica short, copies it back from a
// healthy replica (verified by checksum). Objects written while a pass
// runs are left for the next.
func (d *Device) Scrub(ctx context.Context) (ScrubReport, error) {
	var rep ScrubReport
	all, err := d.st.List()
	if err != nil {
		return rep, fmt.Errorf("device: scrub: %w", err)
	}
	for _, in := range all {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		n, err := d.scrubObject(in.Name)
		rep.Bytes += n
		d.scrubbed.Add(n)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue // deleted or replaced since the listing
		case errors.Is(err, store.ErrCorrupt):
			d.scrubCorrupt.Add(1)
			if qerr := d.quarantine(in.Name, in.Generation); qerr != nil {
				return rep, fmt.Errorf("device: scrub: quarantine %q: %w", in.Name, qerr)
			}
			rep.Corrupt = append(rep.Corrupt, in.Name)
		case err != nil:
			return rep, fmt.Errorf("device: scrub %q: %w", in.Name, err)
		}
		rep.Objects++
	}
	return rep, nil
}

// scrubObject reads every page of name's current generation, verified,
// and returns the payload bytes read.
func (d *Device) scrubObject(name string) (int64, error) {
	o, err := d.st.Acquire(name)
	if err != nil {
		return 0, err
	}
	defer o.Release()
	sh := o.Info().Shape
	var n int64
	for p := range sh.Polys {
		for l := range sh.Limbs {
			if err := o.VisitLimb(p, l, func(int, []byte) {}); err != nil {
				return n, err
			}
			n += int64(sh.LimbBytes())
		}
	}
	return n, nil
}

// quarantine deletes generation gen of name, unless a write replaced or
// deleted it since the scrub read it.
func (d *Device) quarantine(name string, gen store.Generation) error {
	return d.write(func() error {
		err := d.st.DeleteIf(name, gen)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrStale) {
			return nil
		}
		if err != nil {
			return err
		}
		d.quarantined.Add(1)
		return nil
	})
}

// ScrubEvery scrubs the store every interval until ctx ends (`rosemary
// device serve --scrub-interval`), logging what each pass found to log.
func (d *Device) ScrubEvery(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := d.Scrub(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("scrub", "err", err, "objects", rep.Objects, "bytes", rep.Bytes)
		case len(rep.Corrupt) > 0:
			log.Warn("scrub quarantined corrupt objects", "objects", rep.Corrupt)
		}
	}
}
