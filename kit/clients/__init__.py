"""Clients that drive the gRPC server: grpcio's own (``grpcio_client``) and ours on the h2
library (``h2``: a sans-IO connection and a thin socket shell); ``python -m kit.clients``
runs one of them as a child process."""
