#!/bin/sh
# Dev-only: a headless Chromium screenshot of a page of the fixture server (prefers-color-scheme
# dark with "dark"). The virtual time budget lets the page fetch and draw before the shot.
#   web/dev/screenshot.sh URL OUT.png [light|dark] [WIDTH,HEIGHT]
set -eu
url=$1
out=$2
mode=${3:-light}
size=${4:-1440,900}
profile=$(mktemp -d)
dark=""
[ "$mode" = dark ] && dark="--force-dark-mode"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$profile" --window-size="$size" --hide-scrollbars \
  --virtual-time-budget=8000 $dark --screenshot="$out" "$url" >/dev/null 2>&1
rm -rf "$profile"
echo "$out"
