#!/bin/sh
# tests/packaging/unit_test.sh [BUILD_DIR]: systemd-analyze verify on an
# instance of packaging/systemd/hello-family@.service, for every persona of
# servers/personas.txt, with ExecStart pointed at BUILD_DIR's binary (default
# build/) so that nothing needs installing. Man pages are not checked
# (--man=no): they exist only once the package is installed.
# Run by ctest (systemd_unit); exit 77 (skipped) if systemd-analyze is missing.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
[ -d "$build" ] || { echo "FAIL: no build directory $build (scripts/setup, or pass one)"; exit 1; }
build=$(cd "$build" && pwd)
unit="$here/packaging/systemd/hello-family@.service"

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze not found (apt-get install systemd)"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
checked=0
for name in $(awk '!/^#/ && NF { print $1 }' "$here/servers/personas.txt"); do
  checked=$((checked + 1))
  if [ ! -x "$build/hello-$name" ]; then
    echo "FAIL: $build/hello-$name missing (build first)"
    status=1
    continue
  fi
  sed "s|^ExecStart=/usr/bin/hello-%i |ExecStart=$build/hello-%i |" "$unit" \
    >"$tmp/hello-family@$name.service"
  grep -q "^ExecStart=$build/" "$tmp/hello-family@$name.service" || {
    echo "FAIL: ExecStart= line not found in $unit"; exit 1; }
  if out=$(systemd-analyze verify --man=no "$tmp/hello-family@$name.service" 2>&1) &&
     [ -z "$out" ]; then
    echo "ok: hello-family@$name.service"
  else
    echo "FAIL: hello-family@$name.service"
    printf '%s\n' "$out"
    status=1
  fi
done
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no persona in $here/servers/personas.txt"
  exit 1
fi
exit $status
