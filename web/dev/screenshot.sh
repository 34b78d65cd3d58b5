#!/bin/sh
# Dev-only: a headless Chromium screenshot of a page of the fixture server.
#   web/dev/screenshot.sh URL OUT.png [dark] [WIDTHxHEIGHT]
set -eu
url=$1
out=$2
mode=${3:-light}
size=${4:-1440,900}
profile=$(mktemp -d)
dark=""
[ "$mode" = dark ] && dark="--force-dark-mode --enable-features=WebContentsForceDark:inversion_method/cielab_based"
[ "$mode" = dark ] && dark="--force-dark-mode"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$profile" --window-size="$size" --hide-scrollbars \
  --virtual-time-budget=8000 $dark --screenshot="$out" "$url" >/dev/null 2>&1
rm -rf "$profile"
echo "$out"
