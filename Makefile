# Two commands do everything on a fresh machine:  make run   and   make test
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install stacks linkd test-stacks run test lint docs protos bench modelcheck kernelcheck tables tables-quick soak clean

install: $(STAMP) stacks linkd

# Everything the builds print goes to this log; the terminal gets one line per step.
BUILD_LOG := results/build.log

$(STAMP): pyproject.toml
	@mkdir -p $(dir $(BUILD_LOG))
	@echo "kit: installing into $(VENV) (output: $(BUILD_LOG))"
	@{ $(PY) -m venv $(VENV) && \
	  $(BIN)/python -m pip install -q --upgrade pip && \
	  $(BIN)/python -m pip install -q -e '.[dev]'; } >>$(BUILD_LOG) 2>&1 || \
	  { echo "kit: install failed; the last lines of $(BUILD_LOG):"; tail -n 20 $(BUILD_LOG); exit 1; }
	@# Bytecode now: every server, proxy and client process imports the kit afresh, and a
	@# PYTHONDONTWRITEBYTECODE environment would otherwise compile it again in each one.
	@$(BIN)/python -m compileall -q kit servers >>$(BUILD_LOG) 2>&1
	@touch $(STAMP)
	@echo "kit: installed"

# The stacks users run (stacks/<stack>/build.sh, pinned by go.sum, pom.xml, package-lock.json).
# A stack whose toolchain is missing is not built: one line says what to install, and the
# kit refuses that stack in one line while everything else works. Each build's own output
# goes to $(BUILD_LOG); the terminal gets one line per stack: built, or not built and why.
GO_STAMP := stacks/grpc-go/bin/.built
JAVA_STAMP := stacks/grpc-java/target/.built
JS_STAMP := stacks/grpc-js/node_modules/.built
TONIC_STAMP := stacks/tonic/target/release/.built
stacks: $(GO_STAMP) $(JAVA_STAMP) $(JS_STAMP) $(TONIC_STAMP)

# $(call build_stack,name,toolchain check,what to install,build script)
define build_stack
	@mkdir -p $(dir $(BUILD_LOG))
	@if ! { $(2); } >/dev/null 2>&1; then echo "$(1): not built: $(3) and run make stacks"; \
	elif echo "== $(1)" >>$(BUILD_LOG) && $(4) >>$(BUILD_LOG) 2>&1; then \
	  touch $@ && echo "$(1): built"; \
	else echo "$(1): not built: its build failed (see $(BUILD_LOG))"; fi
endef

$(GO_STAMP): $(wildcard stacks/grpc-go/go.* stacks/grpc-go/*.sh stacks/grpc-go/cmd/*/*.go stacks/grpc-go/internal/*/*.go)
	$(call build_stack,grpc-go,command -v go,install Go 1.26+ (https://go.dev/dl),stacks/grpc-go/build.sh)

$(JAVA_STAMP): $(shell find stacks/grpc-java/src stacks/grpc-java/pom.xml stacks/grpc-java/build.sh -type f 2>/dev/null)
	$(call build_stack,grpc-java,command -v java && command -v mvn,install JDK 17+ and Maven 3.8+,stacks/grpc-java/build.sh)

$(JS_STAMP): $(wildcard stacks/grpc-js/*.js stacks/grpc-js/lib/*.js stacks/grpc-js/package*.json stacks/grpc-js/build.sh)
	$(call build_stack,grpc-js,command -v node && command -v npm,install Node 20+ with npm,stacks/grpc-js/build.sh)

$(TONIC_STAMP): $(wildcard stacks/tonic/Cargo.* stacks/tonic/*.rs stacks/tonic/*.sh stacks/tonic/src/*.rs stacks/tonic/src/*/*.rs)
	$(call build_stack,tonic,command -v cargo,install Rust 1.88+ with cargo (https://rustup.rs),stacks/tonic/build.sh)

# The compiled delay line (linkd/, Rust): the kit uses it wherever it is built; without cargo
# one line says so and the kit uses the Python delay line (kit.delayline) instead.
LINKD_STAMP := linkd/target/release/.built
linkd: $(LINKD_STAMP)

$(LINKD_STAMP): $(wildcard linkd/Cargo.* linkd/build.sh linkd/src/*.rs linkd/src/*/*.rs)
	@if command -v cargo >/dev/null; then linkd/build.sh && touch $@; \
	else echo "linkd: not built: install Rust 1.88+ with cargo (https://rustup.rs) and run make install; the kit uses the Python delay line"; fi

# The stacks' own unit tests, and
# linkd's: the schedule's vectors (tests/vectors/schedule.json), which the Python line passes too.
test-stacks: stacks
	@if [ -f $(GO_STAMP) ]; then cd stacks/grpc-go && go test -count=1 ./...; fi
	@if [ -f $(JAVA_STAMP) ]; then stacks/grpc-java/test.sh; fi
	@if [ -f $(JS_STAMP) ]; then cd stacks/grpc-js && node --test --test-reporter=dot test/; fi
	@if [ -f $(TONIC_STAMP) ]; then cd stacks/tonic && cargo test -q --release --locked --lib; fi
	@if [ -f $(LINKD_STAMP) ]; then cd linkd && cargo test -q --release --locked; fi

# The main job: real measurements through the delay line at 20 ms RTT, each table under the
# command that made it, then what the runs show together (their records: $(RUN_RECORDS)).
RUN_RECORDS := results/make-run.jsonl
RUN_KIT = echo; echo "$$ $(BIN)/kit run $(1) --records $(RUN_RECORDS)"; \
	$(BIN)/kit run $(1) --records $(RUN_RECORDS)

run: install
	@rm -f $(RUN_RECORDS)
	@$(call RUN_KIT,--rtt 20ms --window 4MiB --client h2)
	@$(call RUN_KIT,--rtt 20ms --window 64KiB --client h2)
	@$(call RUN_KIT,--rtt 20ms)
	@if [ -f $(GO_STAMP) ]; then $(call RUN_KIT,--rtt 20ms --window 4MiB --client grpc-go); \
	else echo; echo "grpc-go is not built: its run is left out (make stacks)"; fi
	@echo; echo "$$ $(BIN)/kit report $(RUN_RECORDS) --summary"
	@$(BIN)/kit report $(RUN_RECORDS) --summary

# Unit tests are pure: two workers. Integration tests run four at a time (most wait on
# timers, delay lines and their own processes, not on the CPU), except those marked "alone"
# (they time their processes closely, load the machine or count machine-wide state such as
# network namespaces): those run one at a time, after. --durations shows what costs.
test: install test-stacks
	$(BIN)/python -m pytest -q -n 2 tests/unit
	$(BIN)/python -m pytest -q -n 4 --durations=15 -m "not alone" tests/integration
	$(BIN)/python -m pytest -q --durations=15 -m alone tests/integration

lint: install
	$(BIN)/ruff check kit servers tests
	$(BIN)/ruff format --check kit servers tests
	$(BIN)/mypy --strict kit servers
	$(MKDOCS) build --strict
	@for stack in grpc-go grpc-java grpc-js tonic; do \
	    if [ -x stacks/$$stack/lint.sh ] && [ -n "$$(ls stacks/$$stack/.built stacks/$$stack/*/.built stacks/$$stack/*/*/.built 2>/dev/null)" ]; then \
	        stacks/$$stack/lint.sh || exit 1; \
	    fi; \
	done
	@if [ -f $(LINKD_STAMP) ]; then cd linkd && cargo fmt --check && \
	    cargo clippy -q --release --locked --all-targets -- -D warnings; fi

# The docs site from docs/ (mkdocs.yml) into site/. Its reference parts are generated from the
# code on every build (kit/cli/docgen.py, through the hook docs/hooks/kit_docs.py); --strict
# fails on a dead link or anchor.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs
docs: install
	$(MKDOCS) build --strict

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
	$(BIN)/python -m kit.tools.kernelcheck $(KERNELCHECK_ARGS)
	$(BIN)/python -m kit.tools.kernelcheck --read-rate 8Mbit $(KERNELCHECK_ARGS)

# The linux window model beside this machine's kernel on the packet link (root): a table of
# the kernel's advertised window and rcv_space against the model's, over time.
kernelcheck: install
	$(BIN)/python -m kit.tools.kernelcheck $(KERNELCHECK_ARGS)

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
