// Package transport is the framed, counted byte channel between the two
// parties of a hybrid HE-MPC session (client and server).
//
// Every message is one frame: a 10-byte header followed by the payload.
//
//	offset size field
//	0      4    magic   "RMPC"
//	4      1    version (currently 1)
//	5      1    type    (application-defined, never 0)
//	6      4    length  payload length in bytes, big endian
//	10     n    payload
//
// A receiver rejects, with an error naming the problem, a frame whose magic
// or version is wrong, whose type is 0, whose length exceeds the connection's
// limit (checked before any allocation), or that ends early. Errors are
// returned as *FrameError values wrapping the sentinel errors ErrBadMagic,
// ErrBadVersion, ErrBadType, ErrTooLarge and ErrTruncated.
//
// Frame types are allocated by package: 0x20–0x2f ot, 0x30–0x3f nonlinear,
// 0x40–0x4f infer, 0x50–0x5f e2e;
// other protocols should take their own range.
//
// A Conn counts the bytes it moves in each direction (client→server and
// server→client, headers included) and the number of flights: maximal runs of
// frames travelling in one direction. A strictly alternating protocol of r
// round trips has 2r flights; Stats.Rounds reports round trips (flights/2,
// rounded up). The link package turns these counters into projected latency.
//
// Pipe returns two connected in-memory Conns with unbounded buffering, so a
// test can run both parties as goroutines without a network; Dial wraps TCP.
//
// Over a network the frames carry secret shares of the client's input and
// of the model, and the protocols assume private, authenticated channels:
// DialTLS and SessionServer speak mutual TLS 1.3 with the deployment's
// certificates (package device/certs), the server checking the client's
// identity and the client the server's name; a SessionServer serves
// plaintext on a loopback listener only, runs a bounded number of sessions
// at once and drops a peer silent for its idle timeout (WithIdleTimeout).
package transport
