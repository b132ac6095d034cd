package engine

import "fmt"

// RefKind says what a Ref points at.
type RefKind uint8

// Reference kinds. The zero Ref (RefNone) is no reference: the operand's
// limbs travel with the call.
const (
	RefNone   RefKind = iota
	RefStored         // an instance of a stored object, read in place
	RefJob            // a job result or upload held in device memory
)

// Ref names a value a ResidentDevice holds: a stored object instance
// (Name, and Poly, its first polynomial within the object) or a resident
// job result (Job). It is comparable, so it keys maps.
type Ref struct {
	Kind RefKind
	Name string // RefStored: the object
	Poly int    // RefStored: first poly of the instance
	Job  uint64 // RefJob
}

// StoredRef references the instance of stored object name that starts at
// poly.
func StoredRef(name string, poly int) Ref { return Ref{Kind: RefStored, Name: name, Poly: poly} }

// JobRef references the result of device job id.
func JobRef(id uint64) Ref { return Ref{Kind: RefJob, Job: id} }

// IsZero reports whether r references nothing.
func (r Ref) IsZero() bool { return r.Kind == RefNone }

func (r Ref) String() string {
	switch r.Kind {
	case RefNone:
		return "no reference"
	case RefStored:
		return fmt.Sprintf("stored %s poly %d", r.Name, r.Poly)
	case RefJob:
		return fmt.Sprintf("job %d", r.Job)
	}
	return fmt.Sprintf("reference of kind %d", r.Kind)
}
