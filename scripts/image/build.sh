#!/usr/bin/env bash
# `make image`: the sparktrace container image, built on this machine with no container registry and
# no Docker engine: the runtime filesystem of the Dockerfile's final stage (scripts/image/rootfs.sh:
# the libraries the binary loads, from Debian's archive, and nothing else — no shell, no apt), around
# the binary `make` built, committed with buildah with the Dockerfile's runtime configuration.
#
# Usage: scripts/image/build.sh [--binary PATH] [--tag NAME:VERSION] [--archive FILE]
#   --binary   the sparktrace binary to package (default: build/sparktrace)
#   --tag      the local image name (default: sparktrace:<the binary's version>)
#   --archive  also write the image as an OCI archive, for `podman load`, `kind load image-archive`,
#              `ctr images import` or `skopeo copy oci-archive:FILE docker://REGISTRY/...`
#              (default: build/image/sparktrace-<version>.oci.tar; "none" skips it)
set -euo pipefail
cd "$(dirname "$0")/../.."

binary=build/sparktrace
tag=""
archive=""
while (($#)); do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --tag) tag=${2:?--tag needs NAME:VERSION}; shift 2 ;;
    --archive) archive=${2:?--archive needs a file or none}; shift 2 ;;
    *) echo "image: unknown argument '$1' (usage: scripts/image/build.sh [--binary PATH] [--tag NAME:VERSION] [--archive FILE])" >&2
       exit 2 ;;
  esac
done

for tool in mmdebstrap buildah; do
  command -v $tool >/dev/null || { echo "image: $tool is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
[[ -x $binary ]] || { echo "image: no binary at $binary (run make first)" >&2; exit 1; }

version=$("$binary" --version | awk '{print $2}')
[[ -n $version ]] || { echo "image: $binary --version printed no version" >&2; exit 1; }
tag=${tag:-sparktrace:$version}
archive=${archive:-build/image/sparktrace-$version.oci.tar}

work=$(mktemp -d)
container=""
cleanup() {
  [[ -z $container ]] || buildah rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

scripts/image/rootfs.sh "$binary" "$work/rootfs.tar"

container=$(buildah from scratch)
buildah add --quiet "$container" "$work/rootfs.tar" / >/dev/null
# The runtime configuration, the same as the Dockerfile's final stage.
buildah config \
  --user 65532:65532 \
  --workingdir /var/lib/sparktrace \
  --entrypoint '["/usr/bin/sparktrace"]' \
  --cmd '["proxy"]' \
  --port 15002/tcp --port 9464/tcp \
  --env SPARKTRACE_STORE=/var/lib/sparktrace/traces.db \
  --label org.opencontainers.image.title=sparktrace \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --label org.opencontainers.image.source=https://github.com/sparktrace/sparktrace \
  --label org.opencontainers.image.base.name=debian:bookworm \
  "$container"
buildah commit --quiet --rm "$container" "$tag" >/dev/null
container=""
echo "image: built $tag"

if [[ $archive != none ]]; then
  mkdir -p "$(dirname "$archive")"
  rm -f "$archive"
  buildah push --quiet "$tag" "oci-archive:$archive:$tag"
  echo "image: wrote $archive ($(du -h "$archive" | cut -f1))"
fi
