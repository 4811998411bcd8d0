"""Generated protobuf/gRPC code for protos/throughput.proto (make protos regenerates it)."""
