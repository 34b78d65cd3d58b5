#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries BINARY loads (per ldd), one per line,
# sorted: what the runtime image installs, so it carries exactly the libraries the binary needs and
# follows the build's own package versions. Fails naming any library no package owns.
# Usage: scripts/image/runtime-packages.sh BINARY
set -euo pipefail
binary=${1:?usage: runtime-packages.sh BINARY}

owner_of() {
  # dpkg records the path as the package ships it; on a merged-/usr system ldd may name /lib/...
  # for a file shipped as /usr/lib/... (or the reverse), and a symlink for the file behind it.
  local path=$1 candidate
  for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
    dpkg-query -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1 && return 0
  done
  return 1
}

status=0
while read -r library; do
  owner_of "$library" || { echo "runtime-packages: no Debian package owns $library" >&2; status=1; }
done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
exit $status
