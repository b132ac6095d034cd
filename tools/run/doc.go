// Package runtime runs a compiler Plan end to end on real data: it
// generates keys and a database (random PIR records on BGV, random vectors
// on CKKS), uploads the stored data and evaluation keys to the device once
// (setup, reported separately), then runs queries with host nodes on
// Lattigo (engine.Executor) and device nodes as mPrograms on the device
// through its client, the stored data and keys read in place. Every byte
// crossing host↔device is counted by the client's codec; outputs are
// decrypted and compared with a plaintext reference.
package run
