// Package run is the `rosemary run` harness: it runs a compiler Plan end
// to end on real data. PIR writes a seeded database on the device and
// queries it through the client library's PIR session (expanded-query PIR
// on bgv-13); vecdist and hevec generate keys and a database (random or
// MNIST vectors on CKKS), upload the stored data and evaluation keys once
// (setup, reported separately), then run queries with host nodes on
// Lattigo (engine.Executor) and device nodes on the device (stream
// programs, or op by op through a device/resident runner), the stored data
// and keys read in place. Every byte crossing host↔device is counted by
// the remote client; outputs are decrypted and checked against a
// plaintext reference.
package run
