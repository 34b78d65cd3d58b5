#!/usr/bin/env bash
# Packs what the proxy benchmark needs on a machine without this one's packages (the 16-core
# `device` machine: another distribution, no apt, no network): sparktrace, sparktrace-loadgen and
# nginx with every shared library they load, except glibc's own (the target has its own, newer
# glibc; mixing two glibcs' pieces breaks). Run there with LD_LIBRARY_PATH=DIR/lib:
#   LD_LIBRARY_PATH=DIR/lib python3 bench/proxy_bench.py --sparktrace-bin DIR/sparktrace \
#       --loadgen-bin DIR/sparktrace-loadgen --nginx-bin DIR/nginx ...
# Usage: bench/device_bundle.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, build-device)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-build-device}
rm -rf "$out"
mkdir -p "$out/lib"
binaries=("$build/sparktrace" "$build/sparktrace-loadgen" /usr/sbin/nginx)
for binary in "${binaries[@]}"; do
  # Debug info is half the size and none of the speed.
  objcopy --strip-debug "$binary" "$out/$(basename "$binary")"
done
glibc_files=$(dpkg -L libc6 | grep '\.so' || true)
for binary in "${binaries[@]}"; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | while read -r library; do
  real=$(readlink -f "$library")
  if grep -qxF "$library" <<<"$glibc_files" || grep -qxF "$real" <<<"$glibc_files"; then continue; fi
  objcopy --strip-debug "$real" "$out/lib/$(basename "$library")"
done
du -sh "$out" | sed 's/^/device bundle: /'
