package store

import (
	"errors"
	"fmt"
)

// Sentinel errors; match with errors.Is.
var (
	ErrNotFound = errors.New("store: object not found")
	ErrISPMode  = errors.New("store: ISP mode is active: conventional writes (Put, Delete) are refused until SetISP(false)")
	ErrClosed   = errors.New("store: closed")
	ErrCorrupt  = errors.New("store: corrupt page")
	ErrReleased = errors.New("store: object handle already released")
	ErrFull     = errors.New("store: channel address space exhausted")
	// ErrUnmapped: the store's files cannot be mapped here (Object.Map).
	ErrUnmapped = errors.New("store: files cannot be mapped here")
	// ErrStale: a conditional write (PutIf, DeleteIf) found the object at
	// another generation than the one it was given.
	ErrStale = errors.New("store: the object is at another generation")
)

// CorruptPageError reports a page that failed verification. It matches
// ErrCorrupt under errors.Is.
type CorruptPageError struct {
	Object     string
	Generation Generation
	Poly, Limb int
	Page       int // page index within the limb
	Channel    int
	Row        uint32
	Reason     string
}

func (e *CorruptPageError) Error() string {
	return fmt.Sprintf("store: corrupt page: object %q generation %d poly %d limb %d page %d (ch%02d row %d): %s",
		e.Object, e.Generation, e.Poly, e.Limb, e.Page, e.Channel, e.Row, e.Reason)
}

// Unwrap lets errors.Is(err, ErrCorrupt) hold.
func (e *CorruptPageError) Unwrap() error { return ErrCorrupt }
