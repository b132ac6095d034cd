// Package e2e runs a whole fixed-point network (package graph: ResNet-18,
// ResNet-50, reduced versions) as two-party private inference: the server
// holds the weights, the client holds the image and learns the output.
// Every convolution and fully-connected layer runs under the HE protocol
// chosen by the client (package linear: cheetah, optiencode,
// optiencode-bsgs, or optiprime — each layer the layout of least modelled
// cost), every truncation, ReLU, max-pool and average-pool under
// the OT-based protocols (package nonlinear; truncation is exact,
// TruncateExact), residual additions locally on the shares. Batch
// normalization is folded into the convolutions (package graph).
//
// Session, over one transport.Conn (frame types 0x50–0x5f; ot and
// nonlinear use 0x20–0x3f on the same connection):
//
//  1. The client sends hello: version, protocol, log N and the SHA-256
//     digest of the public architecture (graph.Net.Digest: shapes, weight
//     scales, ℓ; no weights); the server checks it against its network.
//  2. The client sends its public key and the Galois keys the layers' plans
//     need, seeded (cheetah.MarshalSeededGaloisKey: the b-halves and a seed
//     of the a-halves); the server regenerates and checks them. Both set up
//     OT extension.
//  3. Operation by operation, both parties hold additive shares mod 2^ℓ of
//     every value (the client's share of the image is the image, the
//     server's zero). A convolution: the client sends one frame per input
//     ciphertext, the server encodes the layer's weights (timed apart as
//     prep), evaluates on all CPUs (linear.EvaluateParallel) and returns one
//     frame per output ciphertext; its share is the mask plus the bias.
//  4. The server opens the output to the client (nonlinear.RevealTo) and
//     sends its per-operation CPU and wall times (JSON, for the report).
//
// Report gives per operation and in total: wall time (client's clock),
// server and client CPU time (getrusage of each process, all threads),
// bytes each way and flights as measured on the connection, and, for
// convolutions, the plan's HE counters; totals split into linear (HE) and
// nonlinear (OT) parts. Report.Check compares the output with graph's
// plaintext reference bit for bit (RunPipe runs both parties in one process
// for tests; `rosemary mpc bench --e2e` runs them as two processes).
//
// Report.Profile splits each party's session by kind (profile.go): HE
// layers by the layout they ran, with the server's weight encoding and the
// client's encryption and decryption apart; ReLU, truncation, pooling;
// the millionaires' protocol and the OT extension wherever they run; with
// wall time, CPU time and the time spent receiving from the peer. A Server
// (NewServer, Prepare) can encode a choice's weights before its sessions,
// and hold them, or (PrepareDir) write them to one weight file per layer
// that each session reads one layer ahead (weights.go): ResNet-18's ≈ 10 GB
// of plaintexts then cost two layers of memory, not all of them.
//
// The nonlinear layers' OTs come from silent OT extension (Ferret, package
// ot), as Cheetah's do: a ReLU moves ≈ 60 bytes, an exact truncation ≈ 80.
// A truncation read only by a ReLU (directly or through a residual Add) runs
// after that ReLU on its nonnegative output, ≈ 26 bytes (fuse.go; exact, so
// the output check is unchanged); the report lists it as local and counts
// its cost under the ReLU. A ReLU read only by a max-pool (ResNet's stem)
// runs after it, on a quarter of the values (fuse.go, pooledReLUs: ReLU and
// truncation are monotone, so they commute with max); the report lists
// that ReLU as local and counts it under the max-pool, its CPU as relu.
package e2e
