#!/usr/bin/env bash
# ws_load against fresh servers on ephemeral loopback ports: runs that must
# pass (hello-sanic at /feed in clear and over TLS, text and binary, 16 in
# flight; hello-aiohttp at /ws with permessage-deflate), then runs that must
# fail (a path with no WebSocket: exit 1; bad flags and a remote host:
# exit 2). Each run is bounded by `timeout`, the whole by ctest's TIMEOUT.
#
#   usage: ws_load_smoke.sh WS_LOAD HELLO_SANIC HELLO_AIOHTTP
set -euo pipefail

tool=$1
sanic=$2
aiohttp=$3
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "ws_load_smoke: $*" >&2
  exit 1
}

# start NAME BINARY FLAGS...: starts a server, sets $port.
start() {
  local name=$1 binary=$2
  shift 2
  "$binary" -H 127.0.0.1 -p 0 "$@" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q '^listening on' "$tmp/$name.err" && break
    sleep 0.05
  done
  port=$(sed -n 's|^listening on https\{0,1\}://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/$name.err")
  [[ -n $port ]] || fail "$name did not start: $(cat "$tmp/$name.err")"
}

# run CODE ARGS...: runs ws_load briefly; it must exit with CODE.
run() {
  local want=$1
  shift
  local got=0
  timeout 30 "$tool" -n 10 --seconds 0.5 --warmup 0.2 --timeout 5 "$@" >"$tmp/out" 2>&1 || got=$?
  [[ $got == "$want" ]] || fail "ws_load $* exited $got, not $want: $(cat "$tmp/out")"
}

start sanic "$sanic"
sanic_port=$port
start sanic_tls "$sanic" --tls
tls_port=$port
start aiohttp "$aiohttp"
aiohttp_port=$port

run 0 --port "$sanic_port" --path /feed --json "$tmp/run.json"
grep -q '"messages": [1-9]' "$tmp/run.json" || fail "no message counted: $(cat "$tmp/run.json")"
run 0 --port "$sanic_port" --path /feed --binary --size 70000 --in-flight 16
run 0 --port "$tls_port" --path /feed --tls --in-flight 4
run 0 --port "$aiohttp_port" --path /ws --deflate --json "$tmp/deflate.json"
grep -q '"deflated": 10' "$tmp/deflate.json" || fail "deflate not agreed: $(cat "$tmp/deflate.json")"
run 1 --port "$sanic_port" --path /nowhere
run 2 --port "$sanic_port" --in-flight 0
run 2 --port "$sanic_port" --host 192.0.2.1
echo "ws_load_smoke: ok"
