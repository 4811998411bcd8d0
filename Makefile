# Two commands do everything on a fresh machine:  make run   and   make test
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install stacks linkd test-stacks run test lint protos bench modelcheck tables tables-quick soak clean

install: $(STAMP) stacks linkd

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# Bytecode now: every server, proxy and client process imports the kit afresh, and a
	# PYTHONDONTWRITEBYTECODE environment would otherwise compile it again in each one.
	$(BIN)/python -m compileall -q kit servers
	touch $(STAMP)

# The stacks users run (stacks/<stack>/build.sh, pinned by go.sum, pom.xml, package-lock.json).
# A stack whose toolchain is missing is not built: one line says what to install, and the
# kit refuses that stack in one line while everything else works.
GO_STAMP := stacks/grpc-go/bin/.built
JAVA_STAMP := stacks/grpc-java/target/.built
JS_STAMP := stacks/grpc-js/node_modules/.built
TONIC_STAMP := stacks/tonic/target/release/.built
stacks: $(GO_STAMP) $(JAVA_STAMP) $(JS_STAMP) $(TONIC_STAMP)

$(GO_STAMP): $(wildcard stacks/grpc-go/go.* stacks/grpc-go/*.sh stacks/grpc-go/cmd/*/*.go stacks/grpc-go/internal/*/*.go)
	@if command -v go >/dev/null; then stacks/grpc-go/build.sh && touch $@; \
	else echo "grpc-go: not built: install Go 1.26+ (https://go.dev/dl) and run make stacks"; fi

$(JAVA_STAMP): $(shell find stacks/grpc-java/src stacks/grpc-java/pom.xml stacks/grpc-java/build.sh -type f 2>/dev/null)
	@if command -v java >/dev/null && command -v mvn >/dev/null; then stacks/grpc-java/build.sh && touch $@; \
	else echo "grpc-java: not built: install JDK 17+ and Maven 3.8+ and run make stacks"; fi

$(JS_STAMP): $(wildcard stacks/grpc-js/*.js stacks/grpc-js/lib/*.js stacks/grpc-js/package*.json stacks/grpc-js/build.sh)
	@if command -v node >/dev/null && command -v npm >/dev/null; then stacks/grpc-js/build.sh && touch $@; \
	else echo "grpc-js: not built: install Node 20+ with npm and run make stacks"; fi

$(TONIC_STAMP): $(wildcard stacks/tonic/Cargo.* stacks/tonic/*.rs stacks/tonic/*.sh stacks/tonic/src/*.rs stacks/tonic/src/*/*.rs)
	@if command -v cargo >/dev/null; then stacks/tonic/build.sh && touch $@; \
	else echo "tonic: not built: install Rust 1.88+ with cargo (https://rustup.rs) and run make stacks"; fi

# The compiled delay line (linkd/, Rust): the kit uses it wherever it is built; without cargo
# one line says so and the kit uses the Python delay line (kit.delayline) instead.
LINKD_STAMP := linkd/target/release/.built
linkd: $(LINKD_STAMP)

$(LINKD_STAMP): $(wildcard linkd/Cargo.* linkd/build.sh linkd/src/*.rs linkd/src/*/*.rs)
	@if command -v cargo >/dev/null; then linkd/build.sh && touch $@; \
	else echo "linkd: not built: install Rust 1.88+ with cargo (https://rustup.rs) and run make install; the kit uses the Python delay line"; fi

# The stacks' own unit tests (Go's and Node's; grpc-java is covered by the kit's tests), and
# linkd's: the schedule's vectors (tests/vectors/schedule.json), which the Python line passes too.
test-stacks: stacks
	@if [ -f $(GO_STAMP) ]; then cd stacks/grpc-go && go test -count=1 ./...; fi
	@if [ -f $(JS_STAMP) ]; then cd stacks/grpc-js && node --test --test-reporter=dot test/; fi
	@if [ -f $(TONIC_STAMP) ]; then cd stacks/tonic && cargo test -q --release --locked --lib; fi
	@if [ -f $(LINKD_STAMP) ]; then cd linkd && cargo test -q --release --locked; fi

# The main job: real measurements through the delay line at 20 ms RTT.
run: install
	$(BIN)/kit run --rtt 20ms --window 4MiB --client h2
	$(BIN)/kit run --rtt 20ms --window 64KiB --client h2
	$(BIN)/kit run --rtt 20ms
	@if [ -f $(GO_STAMP) ]; then $(BIN)/kit run --rtt 20ms --window 4MiB --client grpc-go; fi

# Unit tests are pure: two workers. The conformance test checks each program's protocol and
# the bad-input tests a one-line refusal, not speed: two workers. Every other integration test
# measures real processes: one at a time.
REFUSALS := one_line_and_exit_2 or one_line_error
test: install test-stacks
	$(BIN)/python -m pytest -q -n 2 tests/unit
	$(BIN)/python -m pytest -q -n 2 tests/integration -k "test_conformance or $(REFUSALS)"
	$(BIN)/python -m pytest -q tests/integration --ignore=tests/integration/test_conformance.py \
	    -k "not ($(REFUSALS))"

lint: install
	$(BIN)/ruff check kit servers tests
	$(BIN)/ruff format --check kit servers tests
	$(BIN)/mypy --strict kit servers
	@if [ -f $(LINKD_STAMP) ]; then cd linkd && cargo fmt --check && \
	    cargo clippy -q --release --locked --all-targets -- -D warnings; fi

# Regenerate every language's protobuf/gRPC code from protos/ (committed, so installs need no
# extra step): the service (throughput.proto) and the worker contract (worker.proto).
protos: install
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=kit/_proto \
	    --grpc_python_out=kit/_proto --pyi_out=kit/_proto protos/throughput.proto
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=kit/_proto \
	    --pyi_out=kit/_proto protos/worker.proto
	sed -i 's/^import throughput_pb2 as/from kit._proto import throughput_pb2 as/' kit/_proto/throughput_pb2_grpc.py
	for stack in grpc-go grpc-java grpc-js tonic; do stacks/$$stack/regen.sh; done
	linkd/regen.sh

# Speed and accuracy of the measurement path, as ratios measured side by side.
bench: install
	$(BIN)/python -m kit.tools.bench
	$(BIN)/python -m kit.tools.modelcheck --rounds 1 --pair grpc-go

# The h2 client's models beside real grpc-go, tonic and grpc-java (make stacks first), quiet
# and with one core busy: ~5 minutes a pair. MODELCHECK_ARGS="--pair hyper --rounds 5".
modelcheck: install
	$(BIN)/python -m kit.tools.modelcheck $(MODELCHECK_ARGS)

# Minutes of mixed traffic through the delay line, checksummed end to end (not in CI).
# SOAK_ARGS="--duration 30s" for a short run.
soak: install
	$(BIN)/python -m kit.tools.soak $(SOAK_ARGS)

# The reference study's tables (the grpc-go window study) with our stacks:
# results/tables.md plus records in results/tables-<time>.jsonl (~12.5 min on 2 cores; --quick ~3 min).
# Interrupted? `kit tables --resume` finishes the newest records file.
tables: install
	$(BIN)/kit tables $(TABLES_ARGS)

tables-quick: install
	$(BIN)/kit tables --quick $(TABLES_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -rf stacks/grpc-go/bin stacks/grpc-java/target stacks/grpc-js/node_modules stacks/tonic/target
	rm -rf linkd/target
