"""kit: measure how HTTP/2 flow-control windows and round-trip time bound gRPC throughput."""

import os

# C-core logs expected failures (a port in use) to stderr before we can report them in one
# line; the kit reports errors itself. Set before grpc is imported anywhere.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

__version__ = "0.2.0"
