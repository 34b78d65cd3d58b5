#!/usr/bin/env bash
# Installs whatever sparktrace needs and this machine lacks, from Debian packages and the npm
# registry only. Idempotent: a machine that has everything is left untouched (no apt-get update).
# Usage: scripts/deps.sh [compile|build|bench]
#   compile  what compiling the binary needs, nothing else (the Dockerfile's build stage)
#   build    compile + every test's tools and peers (`make`, `make test`, `make image`); the default
#   bench    build + the benchmark peers
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-build}
case $mode in compile|build|bench) ;; *) echo "deps: unknown mode '$mode' (compile, build or bench)" >&2; exit 2 ;; esac

packages=(
  build-essential cmake pkg-config ninja-build
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libevent-dev libnghttp2-dev libssl-dev zlib1g-dev   # the forwarding core: HTTP/2 frame relay
  libspdlog-dev libgtest-dev libgmock-dev prometheus-cpp-dev libsqlite3-dev
  nlohmann-json3-dev
  libsimdjson-dev libzstd-dev liblz4-dev libsnappy-dev   # Spark event logs: JSON lines, codecs
  libyaml-dev                       # `sparktrace diagnose --rules FILE` (YAML rules files)
  libpq-dev                         # the shared PostgreSQL trace store (--store postgresql://…)
)
[[ $mode == compile ]] || packages+=(
  zstd gzip                         # the parser tests decode compressed logs independently of our decoders
  python3-grpcio python3-protobuf   # independent test peers (Debian's /usr/bin/python3)
  python3-h2                        # raw HTTP/2 test peers: malformed frames, resets mid-message
  prometheus                        # promtool, to check our /metrics output in the tests
  openssl                           # throwaway certificates for the TLS tests
  postgresql-15                     # a real PostgreSQL server for the trace-store tests (tests/support/postgres_server.py)
  python3-yaml                      # the k8s manifest checks
  python3-pip python3-setuptools python3-wheel   # `pip install ./integrations/airflow`, offline, in its test
  chromium                          # the trace view's browser tests (tests/browser, driven by playwright-core)
  mmdebstrap buildah podman runc    # `make image` and its test (tests/image): no registry, no Docker engine
  stress-ng gdb                     # `make stress`: CPU contention, and the hang dumps' native backtraces
)
if [[ $mode == bench ]]; then
  packages+=(nginx)                 # the reference proxy the benchmark compares against
  packages+=(valgrind)              # bench/tracing_instructions.py: tracing's cost in instructions (callgrind)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if [[ $mode != compile ]] && ! { command -v node && command -v npm; } >/dev/null; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Test-only npm packages, each pinned by its lockfile: the Node gRPC client, the official OTLP
# protos and decoder the exporter's bytes are checked against, playwright-core + axe-core for
# the browser tests (which drive Debian's chromium above; playwright-core downloads no browser),
# and the Kubernetes / Prometheus-operator JSON schemas the k8s manifests are validated against.
[[ $mode == compile ]] && exit 0
for node_dir in tests/e2e/node tests/otlp tests/browser tests/k8s/schema; do
  [[ -f $node_dir/package-lock.json ]] || continue
  stamp=$node_dir/node_modules/.package-lock.json
  if [[ ! -f $stamp || $node_dir/package-lock.json -nt $stamp ]]; then
    echo "deps: npm ci in $node_dir"
    (cd $node_dir && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
