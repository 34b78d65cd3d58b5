#!/usr/bin/env bash
# Fuzzes the Spark Connect wire decoders (spark_connect/) under libFuzzer with AddressSanitizer
# and UndefinedBehaviorSanitizer for a bounded time; what `make fuzz` runs. Exits non-zero on any
# crash, sanitizer report, leak, timeout or out-of-memory.
#
# Env: FUZZ_SECONDS  how long to fuzz (default 60)
#      FUZZ_OUT      build output, working corpus and crash artifacts (default build/fuzz; never in git)
# The seeds in fuzz/corpus/ are only read; new inputs go to $FUZZ_OUT/corpus.
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

mkdir -p "$out/corpus" "$out/artifacts"
echo "fuzz: building $out/spark_connect_fuzzer"
# The decoder sources are compiled directly: the library has no dependencies to link.
"$cxx" -std=c++20 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Wall -Wextra -Werror -I. \
  fuzz/spark_connect_fuzzer.cc spark_connect/*.cc \
  -o "$out/spark_connect_fuzzer"

echo "fuzz: running for ${seconds}s"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$out/spark_connect_fuzzer" \
  -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" \
  "$out/corpus" fuzz/corpus
echo "fuzz: no crash in ${seconds}s"
