// Package edgebench measures the RISE edge encryptor (package edge) on this
// machine against Lattigo v6's CKKS public-key encryption in the same run:
// the figures of `rosemary edge bench`. Every timing is the fastest of five
// rounds on one locked OS thread, in wall and thread CPU time (TimeOp).
//
// It lives on the benchmark side so that the edge package stays the
// encryptor alone and never depends on Lattigo; this package is the only
// non-test code measuring edge that imports Lattigo.
package edgebench
