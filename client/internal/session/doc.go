// Package session holds what the client library runs on a device: PIR
// and vector databases written object by object (PIRLoader, VectorLoader)
// and the sessions that query them (PIRSession, VectorSession) — a
// compiled Plan's device segment set once as a stream program, evaluation
// keys stored beside the data, and every query encrypted and decrypted
// here. It speaks to the device only through api.Device.
package session
