#!/usr/bin/env bash
# Fetch a pinned Chromium from Debian's archive into ~/.cache (no root, nothing installed system-wide) for the
# headless browser test of report.html (tests/html, `make test-html`). Idempotent: a second run finds the cache
# and prints its path. Prints the path of a wrapper that runs chromium with the cached libraries.
#
#   bash tests/html/get_chromium.sh            # -> ~/.cache/rlstack-chromium/<version>/chromium
#
# How: `apt-get download` the pinned chromium and chromium-common, then the Depends (first alternative, no
# virtual packages) that dpkg does not list as installed, recursively; `dpkg -x` each into one root; then check
# with ldd that the binary finds every library. Needs apt's package lists (apt-get update) and Debian 12.
set -euo pipefail

CHROMIUM_VERSION=${CHROMIUM_VERSION:-156.0.8078.129-1~deb12u1}
CACHE=${RLSTACK_CHROMIUM_CACHE:-$HOME/.cache/rlstack-chromium}
DEST=$CACHE/$CHROMIUM_VERSION
WRAPPER=$DEST/chromium

done_if_cached() {  # a complete copy of $CHROMIUM_VERSION in the cache: print its wrapper and stop
  if [ -x "$WRAPPER" ] && [ -f "$DEST/.complete" ]; then
    echo "$WRAPPER"
    exit 0
  fi
}
done_if_cached

if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
  echo "get_chromium.sh: needs apt-get and dpkg (Debian); set RLSTACK_CHROMIUM to a chromium binary instead" >&2
  exit 2
fi
t0=$(date +%s)
say() { printf '[get_chromium %3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*" >&2; }

# Debian's security archive keeps only the latest build of a package: when the pinned one is gone, take the build
# apt would install now, and say so (the test reads the page, not the browser's version).
# (apt-cache show answers 0 for a version it does not have: madison lists the ones it has)
if ! apt-cache madison chromium 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF "$CHROMIUM_VERSION"; then
  candidate=$(apt-cache policy chromium 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    echo "get_chromium.sh: chromium $CHROMIUM_VERSION is not in apt's package lists, nor any other chromium: run apt-get update" >&2
    exit 2
  fi
  say "chromium $CHROMIUM_VERSION is no longer in the archive (Debian keeps the latest security build only); taking $candidate"
  CHROMIUM_VERSION=$candidate
  DEST=$CACHE/$CHROMIUM_VERSION
  WRAPPER=$DEST/chromium
  done_if_cached
fi

rm -rf "$DEST.partial"
mkdir -p "$DEST.partial/debs" "$DEST.partial/root"
cd "$DEST.partial/debs"

# apt drops to the _apt user for downloads, which cannot write under /root/.cache
sandbox=()
[ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
depends_of() {  # the real (non-virtual) first alternatives of the Depends/PreDepends of a package
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$1" \
    | awk '/^  (\|)?(Pre)?Depends: [^<]/ { if (!alt) print $2; alt = ($1 == "|Depends:" || $1 == "|PreDepends:"); next }
           /^  (\|)?(Pre)?Depends: </ { alt = ($1 == "|Depends:" || $1 == "|PreDepends:") }'
}

say "downloading chromium $CHROMIUM_VERSION and chromium-common from the Debian archive"
apt-get download -q "${sandbox[@]}" "chromium=$CHROMIUM_VERSION" "chromium-common=$CHROMIUM_VERSION" >/dev/null
declare -A seen=([chromium]=1 [chromium-common]=1)
queue=(chromium chromium-common)
wanted=()
while [ ${#queue[@]} -gt 0 ]; do
  pkg=${queue[0]}; queue=("${queue[@]:1}")
  for dep in $(depends_of "$pkg"); do
    [ -n "${seen[$dep]:-}" ] && continue
    seen[$dep]=1
    installed "$dep" && continue
    wanted+=("$dep"); queue+=("$dep")
  done
done
say "downloading ${#wanted[@]} libraries this machine lacks: ${wanted[*]}"
[ ${#wanted[@]} -eq 0 ] || apt-get download -q "${sandbox[@]}" "${wanted[@]}" >/dev/null

for deb in ./*.deb; do
  dpkg -x "$deb" ../root
done
debs=(./*.deb)
say "unpacked ${#debs[@]} packages"
dpkg-deb -f ./chromium_*.deb Version >../VERSION
printf '%s\n' "${debs[@]#./}" >../PACKAGES
rm -rf ./*.deb

root=$DEST.partial/root
libs=$(find "$root" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
missing=$(LD_LIBRARY_PATH=$libs ldd "$root/usr/lib/chromium/chromium" | awk '/not found/ {print $1}' | tr '\n' ' ')
if [ -n "$missing" ]; then
  echo "get_chromium.sh: chromium still lacks: $missing" >&2
  exit 1
fi

mv "$DEST.partial/root" "$DEST/root" 2>/dev/null || { mkdir -p "$DEST"; rm -rf "$DEST/root"; mv "$DEST.partial/root" "$DEST/root"; }
mv "$DEST.partial/VERSION" "$DEST.partial/PACKAGES" "$DEST/"
cd "$CACHE"
rm -rf "$DEST.partial"
libs=$(find "$DEST/root" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
cat >"$WRAPPER" <<EOF
#!/bin/sh
# chromium $CHROMIUM_VERSION from Debian, unpacked by tests/html/get_chromium.sh
export LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:-}"
exec "$DEST/root/usr/lib/chromium/chromium" "\$@"
EOF
chmod +x "$WRAPPER"
"$WRAPPER" --version >&2
touch "$DEST/.complete"
say "done"
echo "$WRAPPER"
