// Package devicepb is the generated protobuf and gRPC code of the device
// service (device.proto). Do not edit the *.pb.go files: change
// device.proto and run `go generate ./device/api/devicepb` with protoc,
// protoc-gen-go (the version of google.golang.org/protobuf in go.mod) and
// protoc-gen-go-grpc (the version named in device_grpc.pb.go) on PATH.
// CI regenerates with those versions and fails if the committed files are
// stale.
package devicepb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative device.proto
