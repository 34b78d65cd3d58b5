# The two commands of the README: `make run` (build, then the demo) and `make test` (every test).
# Both install missing packages first (scripts/deps.sh, apt + npm only).

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test unit-test run image bench eval asan fuzz format lint clean

all: build

deps:
	@scripts/deps.sh build

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test: the normal build, then the same tests against the sanitizer build.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2
	$(MAKE) --no-print-directory asan

unit-test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L unit -j $(JOBS)

run: build
	$(BUILD_DIR)/sparktrace demo

# The container image sparktrace:<version> in the local image store (podman/buildah), and as an OCI
# archive in $(BUILD_DIR)/image/ to load elsewhere; no registry, no Docker engine (scripts/image/).
image: build
	scripts/image/build.sh --binary $(BUILD_DIR)/sparktrace --archive $(BUILD_DIR)/image/sparktrace.oci.tar

bench: build
	@scripts/deps.sh bench
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
	test -f $(ASAN_DIR)/CMakeCache.txt || cmake -S . -B $(ASAN_DIR) -DSPARKTRACE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j 2 -LE '^(eval|browser)$$'

# The Spark Connect decoder and the gRPC message framer under libFuzzer, each for a bounded time (fuzz/run.sh).
fuzz: deps
	fuzz/run.sh

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

lint: build
	git ls-files '*.cc' | xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
