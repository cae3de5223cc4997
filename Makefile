# Big Two — developer entry points. Every target that runs code depends on `venv`, so each of
# `make run`, `make test`, ... works alone on a fresh clone.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
BIGTWO := $(VENV)/bin/bigtwo
STAMP  := $(VENV)/.installed-dev
RUNTIME_STAMP := $(VENV)/.installed-runtime
# Installed tools outside the virtual environment (buf, Node decoders, the type-check links); gitignored.
TOOLS  := .tools

# shared/ lies beside the repository (also in CI's fresh clone).
SHARED  ?= ../shared
VECTORS := tests/vectors

.PHONY: bare-wheel chromium prometheus redis system-packages node-deps ts-deps ts-proto ts-table buf-breaking api-baseline venv venv-runtime run test bench bench-bots fuzz lint proto buf buf-lint vectors-refresh clean

# venv: everything the tests, linters, benches and fuzzer need (the [dev] extra, which holds every other);
# venv-runtime: only what make run needs: the bigtwo command with its server and the browser port
# (the [cli,web] extras; README "Installs" gives what each extra holds and weighs).
venv: $(STAMP)
venv-runtime: $(RUNTIME_STAMP)

$(PY):
	@echo "Creating the Python environment in $(VENV) (once, on a fresh clone): a virtual environment, then the packages."
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Re-install only when pyproject.toml is newer than the stamp. The dev install holds the runtime
# one, so it renews the runtime stamp as well.
$(RUNTIME_STAMP): pyproject.toml | $(PY)
	@echo "Installing the service and the bigtwo command into $(VENV) (pip install -e '.[cli,web]'; about a minute the first time) ..."
	$(PIP) install -e '.[cli,web]'
	touch $@
$(STAMP): pyproject.toml | $(PY)
	@echo "Installing the service with the test and lint tools into $(VENV) (pip install -e '.[dev]'; a few minutes the first time) ..."
	$(PIP) install -e '.[dev]'
	touch $@ $(RUNTIME_STAMP)

# What the suite needs outside .venv (tests/tools/system_packages.sh): each step is a no-op when
# present; otherwise it says in one sentence what is missing before any apt step, installs it with
# apt-get as root, and ends in a sentence (root needed, or apt-get failed), never a bare "Error 100".
SYSTEM_PACKAGES := tests/tools/system_packages.sh
# Debian's chromium for the HTML replay and browser table tests (tests/test_replay_html.py, test_web_table.py).
chromium:
	@$(SYSTEM_PACKAGES) chromium
# Debian's prometheus and promtool for the alert-rule and live-scrape tests (tests/test_prometheus_*.py).
prometheus:
	@$(SYSTEM_PACKAGES) prometheus
# Debian's redis-server for the spent-token ledger's tests (tests/test_token_ledger.py, docs/SECURITY.md).
redis:
	@$(SYSTEM_PACKAGES) redis
# All of them at once (one apt step), and Node.js with npm for the npm steps below.
system-packages:
	@$(SYSTEM_PACKAGES) chromium prometheus redis node

run: venv-runtime
	$(BIGTWO) run

# What the suite needs beyond pyproject.toml is installed here, never by a test. One pytest-xdist
# worker per core (TEST_WORKERS=0 for one process); --dist loadfile keeps each file's tests, and its
# module fixtures (a shared server, a corpus), in one worker.
TEST_WORKERS ?= auto
# The project's wheel built offline and a fresh environment holding it alone, for tests/test_installs.py
# (tests install nothing); made afresh each time, as the sources change.
bare-wheel: venv
	$(PY) tests/tools/bare_wheel.py $(TOOLS)/bare-wheel

test: venv system-packages ts-deps node-deps bare-wheel
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: venv
	$(BIGTWO) bench engine --json
	$(BIGTWO) bench service --json --seconds 4 --repeats 5
	$(PY) -m bigtwo.tools.replay_bench --deals 10000 --jobs 2
	$(PY) -m bigtwo.tools.cost_bench
	$(PY) -m bigtwo.tools.stall_bench
	$(PY) -m bigtwo.tools.web_bench --json --seconds 2 --rounds 3
	$(PY) -m bigtwo.tools.capacity_bench --json --seconds 3 --plot capacity.png
	$(PY) -m bigtwo.tools.audit_dask_bench --deals 100000
	$(PY) -m bigtwo.tools.tournament_dask_bench --deals 2000

# Issue 17's bot ladder (docs/BOTS.md): random < beginner < good < great on BOT_DEALS duplicate deals
# under every preset at 2, 3 and 4 players, pro - great on PRO_DEALS where PRO_PRESETS x PRO_PLAYERS say
# (BENCH_BOTS_FLAGS=--pro-all for every cell: about an hour more); it prints its estimated run time first.
BOT_DEALS   ?= 2000
PRO_DEALS   ?= 400
PRO_PRESETS ?= classic,web
PRO_PLAYERS ?= 4
BENCH_BOTS_FLAGS ?=
bench-bots: venv
	$(PY) -m bigtwo.tools.bots_bench --deals $(BOT_DEALS) --pro-deals $(PRO_DEALS) --pro-presets $(PRO_PRESETS) \
	  --pro-players $(PRO_PLAYERS) --jobs 2 --json bench-bots.json --plot bench-bots.png $(BENCH_BOTS_FLAGS)

# Issue 13's fuzzing: a client that knows only the proto sends FUZZ_REQUESTS generated requests to
# every RPC of a fresh server (its one mode, aio); fails on UNKNOWN/INTERNAL, a hang, an
# answer a stock client rejects, a crash or an RSS rise (tests/fuzz/fuzz_service.py).
FUZZ_REQUESTS ?= 60000
FUZZ_SEED     ?= 1
FUZZ_SECONDS  ?= 330
FUZZ_MIN      ?= 50000
# Then the browser port at the HTTP/2 frame level (issue 32): H2_FUZZ_ATTACKS seeded attacks
# (rapid reset, CONTINUATION/SETTINGS/PING floods, window abuse, slow bodies, half-closed streams,
# random frames; tests/fuzz/h2_frames.py), failing on a hang, a crash, an error logged or an RSS rise.
H2_FUZZ_ATTACKS ?= 400
H2_FUZZ_SECONDS ?= 240
fuzz: venv
	$(PY) tests/fuzz/fuzz_service.py --requests $(FUZZ_REQUESTS) --seed $(FUZZ_SEED) \
	  --seconds $(FUZZ_SECONDS) --min-requests $(FUZZ_MIN)
	$(PY) tests/fuzz/h2_frames.py --attacks $(H2_FUZZ_ATTACKS) --seed $(FUZZ_SEED) \
	  --seconds $(H2_FUZZ_SECONDS)

# ruff (with the complexity bound), the one-way layer contracts (pyproject.toml [tool.importlinter]) and
# mypy --strict over every package under its import name (tests/tools/package_links.py explains the links).
# tests/test_code_health.py runs the same checks in make test, with its caches in a temporary folder.
TYPECHECK := $(TOOLS)/typecheck
lint: venv
	$(VENV)/bin/ruff check engine service clients proto/bigtwo/codec tests
	$(VENV)/bin/lint-imports
	MYPYPATH=$(TYPECHECK) $(VENV)/bin/mypy --strict $$($(PY) tests/tools/package_links.py $(TYPECHECK) --print-packages)

# Generated code and .pyi stubs land next to the .proto files (proto/bigtwo/v1 -> package bigtwo.v1);
# tests/test_service_proto.py fails when they are stale.
PROTOS := $(wildcard proto/bigtwo/v1/*.proto)
proto: venv
	$(PY) -m grpc_tools.protoc -Iproto --python_out=proto --pyi_out=proto --grpc_python_out=proto $(PROTOS)

# Stock Node.js decoders for tests/test_interop_decoders.py: @grpc/proto-loader and @grpc/grpc-js at the
# versions tests/interop/package-lock.json pins, installed into .tools/interop/node_modules (gitignored),
# outside the tests' folder; the test points node at them with NODE_PATH.
INTEROP := .tools/interop
$(INTEROP)/node_modules/.package-lock.json: tests/interop/package.json tests/interop/package-lock.json
	mkdir -p $(INTEROP)
	cp tests/interop/package.json tests/interop/package-lock.json $(INTEROP)/
	cd $(INTEROP) && npm ci --no-audit --no-fund
node-deps: $(INTEROP)/node_modules/.package-lock.json

# The TypeScript front ends (clients/ts): its npm packages, pinned by clients/ts/package-lock.json, go
# into clients/ts/node_modules (gitignored). They hold buf, protoc-gen-es, esbuild, tsc and playwright-core.
TS      := clients/ts
TS_DEPS := $(TS)/node_modules/.package-lock.json
BUF     := $(TS)/node_modules/.bin/buf
$(TS_DEPS): $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund
ts-deps: $(TS_DEPS)
# make buf installs buf (make test runs it first, so tests/test_service_proto.py installs nothing).
buf: ts-deps
buf-lint: buf
	cd proto && ../$(BUF) lint
# API stability (docs/API.md "Versions and breaking changes"): proto/ against the newest release
# baseline in proto/releases, and every baseline against the one before it
# (tests/test_api_breaking.py runs the same in make test). At a release, after the version bump,
# api-baseline records that version's baseline: never over an existing one, never over a break.
buf-breaking: venv buf
	$(PY) tests/tools/api_baseline.py check --buf $(BUF)
api-baseline: venv buf
	$(PY) tests/tools/api_baseline.py record --buf $(BUF)
# TypeScript code generated from proto/ into clients/ts/src/gen (committed; tests/test_ts_generated.py
# fails when it is stale).
ts-proto: ts-deps
	cd $(TS) && npm run --silent generate
# The browser table (clients/ts/src/table) bundled into service/table/ (committed, served at / by
# --web-port); tests/test_web_table.py fails when the committed files differ from a fresh build.
ts-table: ts-deps
	cd $(TS) && node build_table.mjs

# Mirror $(SHARED)/vectors/**/*.json into tests/vectors/ (subfolders kept), plus the format doc.
vectors-refresh:
	@test -d $(SHARED)/vectors || { echo "$(SHARED)/vectors not found (set SHARED=...)" >&2; exit 1; }
	rm -rf $(VECTORS)
	mkdir -p $(VECTORS)
	cd $(SHARED)/vectors && find . -name '*.json' -type f -exec cp --parents {} $(CURDIR)/$(VECTORS)/ \;
	cp $(SHARED)/vectors/README.md $(VECTORS)/VECTORS-FORMAT.md
	printf '%s\n' '# Source' '' \
	  'copied from shared/vectors of the Big Two project spec; refresh with make vectors-refresh' \
	  > $(VECTORS)/SOURCE.md

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
