"""Clients that drive the gRPC server: grpcio's own, and ours on the h2 library."""
