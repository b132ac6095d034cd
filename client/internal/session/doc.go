// Package session holds what the client library runs on a device, speaking
// to it only through api.Device: databases written object by object and the
// sessions that query them, every query encrypted and decrypted here.
//
// The LWE scheme, PIR's default: load.go writes a database's tiles and hint
// diagonals (LWELoader), query.go asks the device's typed PIR service
// (LWESession: keys uploaded once, then one QueryLWE a record). The BGV
// scheme: pirload.go writes plaintexts (PIRLoader), pir.go their layout
// and what a query reports; its queries and the vector databases' run as
// compiled stream programs behind the interfaces of querier.go, whose
// implementations the client's Programs supply.
package session
