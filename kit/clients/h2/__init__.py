"""Our gRPC client on the h2 library, split like h2 itself: a sans-IO core and a socket shell.

- ``wire``: pure gRPC-over-HTTP/2 framing (headers, length-prefixed messages, grpc-status);
- ``credit``: when flow-control credit goes back (``immediate`` or ``half``);
- ``bdp``: the grpc-go style BDP estimator, time passed in;
- ``events``: what the connection reports, small frozen past-tense records;
- ``connection``: ``H2GrpcConnection``, bytes and ``now`` in, bytes and events out;
- ``speedups``: the one library patch (hyperframe's DATA repr), applied once at import;
- ``client``: ``run_h2``, the thin socket shell (selector loop, warm-up, workloads).
"""
