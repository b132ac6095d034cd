package ir

import "github.com/rosemary-fhe/rosemary/fhe/lwepir"

// LWESpec names the database an LWE scan answers (package fhe/lwepir): its
// parameter set and matrix shape. The IR's nodes model what the answer
// costs; the device runs the answer (the scan and the ring stage) as one
// native program built from this spec (lower.LWEProgram), which the
// compiler emits for the device segment holding the scan.
type LWESpec struct {
	Params     string `json:"params"` // lwepir.ByName
	Rows       int    `json:"rows"`
	Cols       int    `json:"cols"`
	RecordSize int    `json:"record_size"`
}

// Shape returns the spec's parameters and matrix shape, checked.
func (s *LWESpec) Shape() (lwepir.Params, lwepir.Shape, error) {
	p, err := lwepir.ByName(s.Params)
	if err != nil {
		return p, lwepir.Shape{}, err
	}
	sh := lwepir.Shape{Rows: s.Rows, Cols: s.Cols, RecordSize: s.RecordSize}
	return p, sh, sh.Validate(p)
}
