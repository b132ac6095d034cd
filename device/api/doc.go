// Package api is the contract of Rosemary's in-storage device: the Device
// interface (one method per RPC), its request and reply types, the limits
// every request is checked against, and the mapping to and from the wire
// messages of the gRPC service (package devicepb, generated from
// devicepb/device.proto).
//
// Both sides of the wire are built from it: NewServer adapts any Device to
// the generated DeviceServer (converting a request validates it: a request
// that breaks a limit fails with ErrInvalid, never a panic), and NewClient
// turns a gRPC connection back into a Device. Package device implements
// Device over a store and serves it; package device/remote dials one.
// PayloadCounter counts the bytes of the service's messages on either side.
//
// The package depends on no store: applications link it, and the remote
// client, without the device itself.
package api
