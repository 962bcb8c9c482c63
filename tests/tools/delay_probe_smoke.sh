#!/usr/bin/env bash
# delay_probe against a fresh hello-sanic on an ephemeral loopback port, 50
# connections: a run that must pass, then runs that must fail (a wrong
# status, answers earlier than --min-ms, a stopped server, bad flags), so
# the probe is known to be able to fail. Each run is bounded by `timeout`,
# the whole by ctest's TIMEOUT.
#
#   usage: delay_probe_smoke.sh DELAY_PROBE HELLO_SANIC
set -euo pipefail

probe=$1
sanic=$2
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]]; then
    kill -CONT "$server" 2>/dev/null || true
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "delay_probe_smoke: $*" >&2
  exit 1
}

"$sanic" -H 127.0.0.1 -p 0 2>"$tmp/server.err" &
server=$!
for _ in $(seq 100); do
  grep -q '^listening on' "$tmp/server.err" && break
  sleep 0.05
done
port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/server.err")
[[ -n $port ]] || fail "hello-sanic did not start: $(cat "$tmp/server.err")"

# probe CODE ARGS...: runs delay_probe with 50 connections; it must exit with CODE.
probe() {
  local want=$1 rc=0
  shift
  timeout 20 "$probe" --port "$port" -n 50 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if ((rc != want)); then
    cat "$tmp/out" "$tmp/err" >&2
    fail "delay_probe $* exited $rc, not $want"
  fi
}
# has FILE TEXT: FILE holds the line TEXT.
has() { grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "no line '$2' in $1"; }; }

probe 0 --path / --min-ms 0 --within 1 --check 100:1000 --rss-pid "$server" \
  --max-rss-per-waiting 65536 --json "$tmp/run.json" --csv "$tmp/run.csv"
has "$tmp/out" "answered    50/50 with status 200; errors 0"
has "$tmp/out" "check       100% within 1000 ms: ok"
has "$tmp/out" "PASS"
has "$tmp/run.json" '  "answered": 50,'
has "$tmp/run.json" '  "pass": true'
[[ $(wc -l <"$tmp/run.csv") -eq 51 ]] || fail "run.csv: not one line per connection"

probe 1 --path /nope
has "$tmp/out" "  error     50 x status 404 instead of 200"
probe 0 --path /nope --expect-status 404

probe 1 --path / --min-ms 1000
has "$tmp/out" "early       50 answers earlier than 1000 ms"
probe 1 --path / --check 100:0.001
has "$tmp/out" "check       100% within 0.001 ms: FAILED"

# A stopped server still completes handshakes but answers nothing.
kill -STOP "$server"
probe 1 --path / --timeout 1
kill -CONT "$server"
has "$tmp/out" "  error     50 x no answer before --timeout"

# A bad flag or a remote address: one line on stderr, exit 2.
for flags in "--check 99" "--host 192.0.2.1" "--spread 20" "--bogus"; do
  # shellcheck disable=SC2086
  probe 2 $flags
  [[ $(wc -l <"$tmp/err") -eq 1 && ! -s $tmp/out ]] || fail "$flags: not one line on stderr"
done
echo "delay_probe_smoke: ok"
