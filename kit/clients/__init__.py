"""Clients that drive the gRPC server: grpcio's own (``grpcio_client``) and ours on the h2
library (``h2``: a sans-IO connection and a thin socket shell); each runs as a child process
of the process protocol (``process``: ``python -m kit.clients.h2 --config '<json>'``)."""
