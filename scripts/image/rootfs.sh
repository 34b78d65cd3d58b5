#!/usr/bin/env bash
# The runtime filesystem of the sparktrace image, from Debian's archive: the packages holding the
# libraries BINARY loads (scripts/image/runtime-packages.sh) with their dependencies, base-files and
# netbase, plus the binary without its debug info. No shell, no apt, no dpkg: `extract` unpacks the
# packages without running their maintainer scripts, so nothing executes inside the tree; the
# extract hook adds what those scripts would have (users, the library cache). Used by `make image`
# (scripts/image/build.sh) and by the Dockerfile, so both images hold the same files.
# SOURCE_DATE_EPOCH, when set, makes the tree's timestamps reproducible.
# Usage: scripts/image/rootfs.sh BINARY OUTPUT   (OUTPUT ending in .tar: a tarball; else a directory)
set -euo pipefail
binary=${1:?usage: rootfs.sh BINARY OUTPUT}
output=${2:?usage: rootfs.sh BINARY OUTPUT}
here=$(cd "$(dirname "$0")" && pwd)

command -v mmdebstrap >/dev/null || { echo "rootfs: mmdebstrap is missing (scripts/deps.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The debug info stays with the build; the image gets the same code at about 1/6 of the size.
objcopy --strip-debug "$binary" "$work/sparktrace"
packages=$("$here/runtime-packages.sh" "$binary" | sort -u | paste -sd, -)
echo "rootfs: runtime packages: $packages"

format=directory
[[ $output == *.tar ]] && format=tar
mmdebstrap --quiet --mode=root --variant=extract --format=$format \
  --include="$packages,base-files,netbase" \
  --extract-hook="\"$here/finish-rootfs.sh\" \"\$1\" \"$work/sparktrace\"" \
  bookworm "$output"
