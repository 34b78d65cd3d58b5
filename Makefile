# The two commands of the README: `make run` (build the binary, then the demo) and `make test` (every
# test). Both install missing packages first (scripts/deps.sh, apt + npm only): `make run` only what
# compiling the binary needs, `make test` every test's tools and peers too.

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
CMAKE_FLAGS ?=
# Ninja where it is installed (scripts/deps.sh installs it): its scheduling keeps both cores busy
# to the last file. A build directory keeps the generator it was first configured with.
GENERATOR := $(if $(shell command -v ninja),-G Ninja,)

.PHONY: all deps deps-compile build test unit-test run image bench eval asan fuzz stress format lint clean

all: build

deps:
	@scripts/deps.sh build

deps-compile:
	@scripts/deps.sh compile

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) $(GENERATOR) $(CMAKE_FLAGS)

# The binary, the unit tests and the test fixtures (not the benchmarks).
build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test: the normal build's, then the same tests against the sanitizer build, which compiles
# at low priority while the first pass runs; the GoogleTest suites run in the sanitizer pass only
# (scripts/make_test.sh says why; phase times at the end).
test: deps
	BUILD_DIR=$(BUILD_DIR) ASAN_DIR=$(ASAN_DIR) JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" scripts/make_test.sh

unit-test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L unit -j $(JOBS)

# Only the binary: the demo needs nothing else, so a fresh clone shows it after one target's compile.
run: deps-compile $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sparktrace
	$(BUILD_DIR)/sparktrace demo

# The container image sparktrace:<version> in the local image store (podman/buildah), and as an OCI
# archive in $(BUILD_DIR)/image/ to load elsewhere; no registry, no Docker engine (scripts/image/).
image: build
	scripts/image/build.sh --binary $(BUILD_DIR)/sparktrace --archive $(BUILD_DIR)/image/sparktrace.oci.tar

bench: build
	@scripts/deps.sh bench
	cmake --build $(BUILD_DIR) -j $(JOBS) --target benchmarks
	/usr/bin/python3 bench/proxy_bench.py --build-dir $(BUILD_DIR)
	/usr/bin/python3 bench/soak_bench.py --build-dir $(BUILD_DIR)
	/usr/bin/python3 bench/tracing_bench.py --build-dir $(BUILD_DIR)
	/usr/bin/python3 bench/store_bench.py --build-dir $(BUILD_DIR)
	/usr/bin/python3 bench/store_outage_bench.py --build-dir $(BUILD_DIR)
	$(BUILD_DIR)/sparktrace-listener-parse-bench --include-compressed --runs 5 --passes 1 > bench/results/listener_parse.json
	@cat bench/results/listener_parse.json
	node bench/trace_view_browser_bench.mjs --build-dir $(BUILD_DIR)

# Precision and recall of `sparktrace diagnose` per finding id over a labelled corpus (simulated logs with
# each problem injected, their clean twins, and the real logs); writes bench/results/diagnose.json.
eval: build
	/usr/bin/python3 bench/diagnose_eval.py --build-dir $(BUILD_DIR)

# Every test again against an AddressSanitizer + UBSan build (part of `make test`), but for the two
# whose subject is not memory safety and that cost most of the pass under the sanitizers: the rules'
# accuracy over 300 logs (eval; the real-log unit tests run the same rules here) and the page in
# Chromium (browser; e2e.test_trace_view runs its API here).
asan: deps
	test -f $(ASAN_DIR)/CMakeCache.txt || cmake -S . -B $(ASAN_DIR) $(GENERATOR) -DSPARKTRACE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j 2 -LE '^(eval|browser|script)$$'

# The end-to-end modules many times over under CPU contention, each test with a deadline that dumps
# every thread when it hangs (tests/stress/e2e_stress.py): the relay module STRESS_RELAY_RUNS times,
# every other module STRESS_RUNS times, three at a time beside stress-ng on both cores. About 40 minutes
# on 2 cores at the defaults; the README quotes its last figures.
STRESS_RELAY_RUNS ?= 200
STRESS_RUNS ?= 20
STRESS_OUT ?= $(BUILD_DIR)/stress
stress: build
	/usr/bin/python3 tests/stress/e2e_stress.py --bin $(BUILD_DIR)/sparktrace --all-e2e $(STRESS_RUNS) \
	  --module test_http2_relay=$(STRESS_RELAY_RUNS) --module node/forwarding=$(STRESS_RUNS) \
	  --module node/tracing=$(STRESS_RUNS) --parallel 3 --contention 2 \
	  --logs $(STRESS_OUT) --out $(STRESS_OUT)/summary.json

# The Spark Connect decoder and the gRPC message framer under libFuzzer, each for a bounded time (fuzz/run.sh).
fuzz: deps
	fuzz/run.sh

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

# clang-tidy needs each file's own compile command: a build directory without unity batches, with
# the generated protos the tests include.
LINT_DIR ?= build-lint
lint: deps
	test -f $(LINT_DIR)/CMakeCache.txt || cmake -S . -B $(LINT_DIR) $(GENERATOR) -DSPARKTRACE_UNITY=OFF $(CMAKE_FLAGS)
	cmake --build $(LINT_DIR) -j $(JOBS) --target sparktrace_test_protos sparktrace_sim_protos
	git ls-files '*.cc' | xargs clang-tidy -p $(LINT_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(LINT_DIR)
