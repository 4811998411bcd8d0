"""Frozen, validated plans: units, configs, the one plan builder, campaigns and their order.

Modules: ``units`` (parsing at the edge), ``trial`` (Link, ClientConfig, ServerConfig,
Workload, Trial), ``grpc_args`` (configs -> C-core channel arguments), ``builder`` (option
values -> configs, candidate specs), ``schedule`` (seeded interleaved rounds), ``campaign``
(cells and specs), ``compare`` / ``presets`` / ``tables`` (what each command runs),
``processes`` (what the server and delay-line processes are started with).
"""
