#!/usr/bin/env bash
# `make test`: every test at least once, in a pass against the normal build and one against the
# AddressSanitizer + UBSan build (which tests run in which pass: below), arranged so that a 2-core
# machine is never idle and never oversubscribed:
#
#   1. the normal build of what the normal tests run (target sparktrace_test_subjects: the binary
#      and the OTLP fixture; the benchmarks are `make bench`'s);
#   2. the normal tests. The sanitizer build compiles beside both at the lowest CPU priority
#      (nice 19): the tests wait on sockets, timers and child processes much of the time, and the
#      build takes only the cycles they leave, so the tests see the machine as if it were quiet;
#   3. what is left of the sanitizer build, at full priority;
#   4. the sanitizer tests (all but eval, browser and script: see the Makefile's `asan` and
#      tests/CMakeLists.txt's `script` label).
#
# The GoogleTest suites (label `gtest`) run once, in the sanitizer pass: their bodies compile at -O0
# in both builds, and under ASan + UBSan the same tests check more. The normal pass leaves them out,
# and the normal build does not compile them (`make unit-test` runs them on the normal build).
#
# Each phase's wall time is printed at the end and written to $BUILD_DIR/make-test-times.json (the
# README's "The loop" quotes them). A failure stops at its phase with a non-zero exit; the
# background build is stopped with it.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
ASAN_DIR=${ASAN_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
CMAKE_FLAGS=${CMAKE_FLAGS:-}
# Two tests at a time: a proxy and its peers per end-to-end test, on 2 cores.
TEST_JOBS=${TEST_JOBS:-2}

declare -A seconds=()
phases=()
phase_start=0
begin() { phase_start=$SECONDS; phases+=("$1"); echo "== make test: $1"; }
end() { seconds[${phases[-1]}]=$((SECONDS - phase_start)); }

configure() {  # configure DIR [cmake args...]: once per build directory, as `make` does
  local dir=$1
  shift
  [[ -f $dir/CMakeCache.txt ]] && return 0
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # shellcheck disable=SC2086  # CMAKE_FLAGS is a list of flags
  cmake -S . -B "$dir" "${generator[@]}" "$@" $CMAKE_FLAGS
}

asan_pid=""
stop_asan_build() { [[ -n $asan_pid ]] && kill -- "$asan_pid" 2>/dev/null || true; }
trap stop_asan_build EXIT

# The sanitizer build starts first, at the lowest priority: beside the normal build it takes only
# the cycles that build leaves (its links, the last steps that one core finishes alone).
configure "$ASAN_DIR" -DSPARKTRACE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
asan_log=$ASAN_DIR/make-test-build.log
nice -n 19 cmake --build "$ASAN_DIR" -j "$JOBS" >"$asan_log" 2>&1 &
asan_pid=$!

begin build
configure "$BUILD_DIR"
cmake --build "$BUILD_DIR" -j "$JOBS" --target sparktrace_test_subjects
end

begin tests
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$TEST_JOBS" -LE '^gtest$'
end

begin sanitizer-build-rest
if ! wait "$asan_pid"; then
  asan_pid=""
  tail -n 60 "$asan_log" >&2
  echo "make test: the sanitizer build failed (whole log: $asan_log)" >&2
  exit 1
fi
asan_pid=""
# Anything the niced build left (nothing, once it finished) at full priority; prints what it did.
cmake --build "$ASAN_DIR" -j "$JOBS"
end

begin sanitizer-tests
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$ASAN_DIR" --output-on-failure -j "$TEST_JOBS" -LE '^(eval|browser|script)$'
end

total=0
json="{"
for phase in "${phases[@]}"; do
  total=$((total + seconds[$phase]))
  printf 'make test: %-22s %5d s\n' "$phase" "${seconds[$phase]}"
  json+="\"${phase}_s\": ${seconds[$phase]}, "
done
printf 'make test: %-22s %5d s\n' total "$total"
echo "${json}\"total_s\": $total}" >"$BUILD_DIR/make-test-times.json"
