// Package client is what a Rosemary user imports: encrypted databases of
// their own data on a Rosemary device — a daemon (`rosemary device serve`,
// Open) or any api.Device the caller holds (New), such as an in-process
// device over a store directory. It links only the device contract
// (device/api) and its gRPC client (device/remote), never the store.
//
//	keys, _ := client.NewKeys(dir)             // secret keys stay here (0600)
//	c, _ := client.Open(ctx, "127.0.0.1:7420", keys)
//	c.CreatePIR(ctx, "words", 64, client.PIROptions{})
//	c.Load(ctx, "words", file, client.LoadOptions{Records: dataset.Lines})
//	rec, _ := c.Get(ctx, "words", 123)         // the device never learns 123
//
// A database is a manifest (its head object, replaced in one atomic Put)
// and generations of data: Load writes a new generation beside the current
// one and publishes it only when complete, so a failed or killed load
// leaves the previous generation queryable. Evaluation keys are made from
// the user's secret keys and stored on the device once per key set. A PIR
// database answers with the hint-free LWE scheme by default (fhe/lwepir:
// the device scans the stored bytes once per query and evaluates the hint
// it keeps beside them on the encrypted LWE secret); SchemeBGV runs the
// compiled Plan's device segment as a stream program instead. Either way
// only the query and the answer cross the link.
package client
