#!/usr/bin/env bash
# Fuzzes the Spark Connect wire decoders (spark_connect/) and the proxy's gRPC message framer
# (proxy/grpc_message_framer) under libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer
# for a bounded time each; what `make fuzz` runs. Exits non-zero on any crash, sanitizer report,
# leak, timeout or out-of-memory.
#
# Env: FUZZ_SECONDS  how long to fuzz each target (default 60)
#      FUZZ_OUT      build output, working corpora and crash artifacts (default build/fuzz; never in git)
# The seeds in fuzz/corpus/ (Spark Connect messages) are only read; new inputs go to
# $FUZZ_OUT/corpus. The framer starts from nothing: its input is mostly raw bytes, found fast.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
out=${FUZZ_OUT:-build/fuzz}
cxx=clang++-14

# Debian 12: clang-14 is the compiler, libclang-rt-14-dev holds the libFuzzer runtime that
# -fsanitize=fuzzer links (libclang_rt.fuzzer-x86_64.a) and the sanitizer runtimes. (The separate
# libfuzzer-14-dev package is the standalone libFuzzer.a, not needed here.)
have_runtime() {
  compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null
}
if ! command -v "$cxx" >/dev/null || ! have_runtime; then
  echo "fuzz: installing clang-14 libclang-rt-14-dev"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "fuzz: need root or sudo to install clang-14" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev
fi

mkdir -p "$out/corpus" "$out/grpc_framer_corpus" "$out/artifacts"

# build NAME SOURCES...: one fuzzer binary, $out/NAME, sources compiled directly (neither has
# dependencies to link).
build() {
  local name=$1
  shift
  echo "fuzz: building $out/$name"
  "$cxx" -std=c++20 -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Wall -Wextra -Werror -I. \
    "$@" \
    -o "$out/$name"
}

# fuzz NAME MAX_LEN CORPUS...: runs $out/NAME for $seconds; the first corpus directory takes new inputs.
fuzz() {
  local name=$1 max_len=$2
  shift 2
  echo "fuzz: running $name for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$out/$name" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name-" \
    "$@"
}

build spark_connect_fuzzer fuzz/spark_connect_fuzzer.cc spark_connect/*.cc
build grpc_framer_fuzzer fuzz/grpc_framer_fuzzer.cc proxy/grpc_message_framer.cc

fuzz spark_connect_fuzzer 8192 "$out/corpus" fuzz/corpus
fuzz grpc_framer_fuzzer 4096 "$out/grpc_framer_corpus"
echo "fuzz: no crash in ${seconds}s per target"
