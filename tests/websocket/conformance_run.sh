#!/usr/bin/env bash
# The conformance suite against a fresh hello-NAME on an ephemeral loopback
# port: starts it (with --tls when asked), runs conformance.py at the
# persona's WebSocket path with its message limit, stops it. ctest runs it
# per persona (tests/CMakeLists.txt); bounded by `timeout` and ctest's TIMEOUT.
#
#   usage: conformance_run.sh HELLO_BINARY PATH MAX_MESSAGE [--tls] [--deflate]
set -euo pipefail

binary=$1
path=$2
max=$3
shift 3
tls=
deflate=
for arg in "$@"; do
  case $arg in
    --tls) tls=--tls ;;
    --deflate) deflate=--deflate ;;
    *) echo "conformance_run: unknown argument $arg" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

flags=(-H 127.0.0.1 -p 0)
[[ $tls == --tls ]] && flags+=(--tls)
"$binary" "${flags[@]}" 2>"$tmp/server.err" &
server=$!
for _ in $(seq 100); do
  grep -q '^listening on' "$tmp/server.err" && break
  sleep 0.05
done
port=$(sed -n 's|^listening on https\{0,1\}://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/server.err")
if [[ -z $port ]]; then
  echo "conformance_run: $binary did not start: $(cat "$tmp/server.err")" >&2
  exit 1
fi
args=(--port "$port" --path "$path" --max-message "$max")
[[ $tls == --tls ]] && args+=(--tls)
[[ $deflate == --deflate ]] && args+=(--deflate)
timeout 150 /usr/bin/python3 "$here/conformance.py" "${args[@]}"
