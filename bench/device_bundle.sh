#!/usr/bin/env bash
# Packs what the benchmarks need on a machine without this one's packages (the 16-core `device`
# machine: another distribution, no apt, no network): sparktrace, sparktrace-loadgen,
# sparktrace-store-bench and sparktrace-pipeline-bench (when built) and nginx, with every shared
# library they load except glibc's own (the target has its own, newer glibc; mixing two glibcs'
# pieces breaks); with --with-postgres also Debian's PostgreSQL 15 (postgres, initdb, psql, its
# modules and share files).
#
# Each program is run through a wrapper in OUT/bin that sets LD_LIBRARY_PATH for that program
# alone: set for the whole benchmark, our libraries would also replace the target's under its own
# Python (its sqlite3 module, built against a newer SQLite, would not load ours).
#   bench/device_bundle.sh build build-device --with-postgres
#   (there) SPARKTRACE_PG_BIN=build-device/pg/bin python3 bench/tracing_scale_bench.py \
#       --sparktrace-bin build-device/bin/sparktrace --loadgen-bin build-device/bin/sparktrace-loadgen
# PostgreSQL refuses to run as root: on a root-only target, create a `postgres` user first, and keep
# the bundle where that user can read it (tests/support/postgres_server.py runs the cluster as it).
# Usage: bench/device_bundle.sh [BUILD_DIR] [OUT_DIR] [--with-postgres]   (defaults: build, build-device)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-build-device}
with_postgres=${3:-}
pg_version=15
rm -rf "$out"
mkdir -p "$out/lib" "$out/real" "$out/bin"

binaries=("$build/sparktrace" "$build/sparktrace-loadgen")
for extra in sparktrace-store-bench sparktrace-pipeline-bench; do
  [[ -x "$build/$extra" ]] && binaries+=("$build/$extra")
done
# proxy_bench.py's reference; the tracing and store benchmarks do without it.
if [[ -x /usr/sbin/nginx ]]; then binaries+=(/usr/sbin/nginx); else echo "device bundle: no /usr/sbin/nginx, left out" >&2; fi

# A wrapper that runs REAL with the bundle's libraries; exec keeps the pid (the benchmarks account
# CPU by pid).
write_wrapper() {  # wrapper path, real binary path relative to the bundle's root
  cat >"$1" <<EOF
#!/bin/sh
root=\$(dirname "\$(readlink -f "\$0")")/$(realpath --relative-to="$(dirname "$1")" "$out")
LD_LIBRARY_PATH="\$root/lib" exec "\$root/$2" "\$@"
EOF
  chmod +x "$1"
}

for binary in "${binaries[@]}"; do
  # Debug info is half the size and none of the speed.
  objcopy --strip-debug "$binary" "$out/real/$(basename "$binary")"
  write_wrapper "$out/bin/$(basename "$binary")" "real/$(basename "$binary")"
done

libraries_of=("${binaries[@]}")
if [[ "$with_postgres" == "--with-postgres" ]]; then
  # The real programs where PostgreSQL finds its share and module folders relative to itself
  # (Debian's bin/lib/share layout under any root), the wrappers in pg/bin.
  pg_root="$out/pg/lib/postgresql/$pg_version"
  mkdir -p "$pg_root/bin" "$pg_root/lib" "$out/pg/share/postgresql" "$out/pg/bin"
  for program in postgres initdb psql; do
    objcopy --strip-debug "/usr/lib/postgresql/$pg_version/bin/$program" "$pg_root/bin/$program"
    write_wrapper "$out/pg/bin/$program" "pg/lib/postgresql/$pg_version/bin/$program"
    libraries_of+=("/usr/lib/postgresql/$pg_version/bin/$program")
  done
  # Modules without the JIT (LLVM) and its bitcode, which the tests' clusters never load.
  find "/usr/lib/postgresql/$pg_version/lib" -maxdepth 1 -name '*.so' ! -name 'llvmjit*' \
    -exec cp -t "$pg_root/lib" {} +
  cp -a "/usr/share/postgresql/$pg_version" "$out/pg/share/postgresql/"
  cp -a /usr/share/zoneinfo "$out/pg/zoneinfo"  # Debian's PostgreSQL reads the system's tz data
  for module in "$pg_root"/lib/*.so; do libraries_of+=("$module"); done
fi

glibc_files=$(dpkg -L libc6 | grep '\.so' || true)
for binary in "${libraries_of[@]}"; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | while read -r library; do
  real=$(readlink -f "$library")
  if grep -qxF "$library" <<<"$glibc_files" || grep -qxF "$real" <<<"$glibc_files"; then continue; fi
  objcopy --strip-debug "$real" "$out/lib/$(basename "$library")"
done
du -sh "$out" | sed 's/^/device bundle: /'
