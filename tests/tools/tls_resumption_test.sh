#!/usr/bin/env bash
# Resumption across workers (docs/tls.md): hello-sanic --tls -w 2, and 200
# connections one after another, each presenting the previous one's
# session (tls_resume), over TLS 1.3 and then TLS 1.2. Every one after the
# first resumes, whichever worker accepted it, and the server's /metrics
# say the same as the client; with --tls-no-resume none resumes. Then the
# certificate: --tls-write-cert makes a verifying client's check hold.
# Loopback only; every command bounded by `timeout`, the whole by ctest.
#
#   usage: tls_resumption_test.sh TLS_RESUME HELLO_SANIC
set -euo pipefail

client=$1
server=$2
tmp=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "tls_resumption_test: $*" >&2
  exit 1
}

# start FLAGS...: hello-sanic on free ports; sets pid, port and admin.
start() {
  if [[ -n $pid ]]; then
    kill "$pid" && wait "$pid" || true
  fi
  "$server" -H 127.0.0.1 -p 0 -w 2 --admin 127.0.0.1:0 "$@" 2>"$tmp/server.err" &
  pid=$!
  for _ in $(seq 100); do
    grep -q '^admin on ' "$tmp/server.err" && break
    sleep 0.05
  done
  port=$(sed -n 's|^listening on https://127\.0\.0\.1:\([0-9]*\) .*|\1|p' "$tmp/server.err")
  admin=$(sed -n 's|^admin on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$tmp/server.err")
  [[ -n $port && -n $admin ]] || fail "server did not start: $(cat "$tmp/server.err")"
}

# field JSON KEY: one number of tls_resume's JSON.
field() {
  python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

# metric NAME KIND: the sum over the workers of hello_tls_handshakes_total{kind=KIND}.
metric() {
  timeout 5 python3 - "$admin" "$1" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
print(sum(int(float(l.split()[-1])) for l in text.splitlines()
          if l.startswith("hello_tls_handshakes_total{") and f'kind="{sys.argv[2]}"' in l))
EOF
}

# per_worker KIND: the workers' counts of hello_tls_handshakes_total{kind=KIND}.
per_worker() {
  timeout 5 python3 - "$admin" "$1" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
print(" ".join(l.split()[-1] for l in text.splitlines()
               if l.startswith("hello_tls_handshakes_total{") and f'kind="{sys.argv[2]}"' in l))
EOF
}

start --tls --tls-write-cert "$tmp/cert.pem"
full_before=0
resumed_before=0
for version in 1.3 1.2; do
  out=$(timeout 30 "$client" --port "$port" --count 200 --tls-max "$version" --json) ||
    fail "TLS $version: tls_resume failed: $out"
  [[ $(field "$out" resumed) == 199 && $(field "$out" full) == 1 ]] ||
    fail "TLS $version: expected 199 resumed and 1 full: $out"
  full=$(metric full)
  resumed=$(metric resumed)
  [[ $((full - full_before)) == 1 && $((resumed - resumed_before)) == 199 ]] ||
    fail "TLS $version: /metrics counts $((full - full_before)) full, $((resumed - resumed_before)) resumed"
  full_before=$full
  resumed_before=$resumed
done
# SO_REUSEPORT spread the 400 connections over both workers, and each
# resumed what the other had issued: no worker did all of them.
read -r w0 w1 <<<"$(per_worker resumed)"
((w0 > 0 && w1 > 0)) || fail "resumed per worker: $w0 and $w1 (one worker took everything)"

# The written certificate verifies, for the name localhost and for the
# address: Python's ssl with verification on, connected to 127.0.0.1 and
# checking NAME (curl --cacert does the same, docs/tls.md; curl, and a
# resolvable localhost, are not on every machine that runs the tests).
verify() {
  timeout 10 python3 - "$port" "$1" "$tmp/cert.pem" <<'EOF'
import socket, ssl, sys
context = ssl.create_default_context(cafile=sys.argv[3])
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as raw:
    with context.wrap_socket(raw, server_hostname=sys.argv[2]) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
print(answer.split(b"\r\n\r\n", 1)[-1].decode(), end="")
EOF
}
body=$(verify localhost 2>&1) || fail "verification for localhost: $body"
[[ $body == 'Hello!!!' ]] || fail "verification for localhost: got '$body'"
body=$(verify 127.0.0.1 2>&1) || fail "verification for 127.0.0.1: $body"
[[ $body == 'Hello!!!' ]] || fail "verification for 127.0.0.1: got '$body'"
if verify example.com >/dev/null 2>&1; then fail "a name the certificate does not hold verified"; fi

start --tls --tls-no-resume
out=$(timeout 30 "$client" --port "$port" --count 200 --json) || fail "--tls-no-resume: $out"
[[ $(field "$out" resumed) == 0 && $(field "$out" full) == 200 ]] ||
  fail "--tls-no-resume: expected 200 full: $out"
[[ $(metric resumed) == 0 && $(metric full) == 200 ]] ||
  fail "--tls-no-resume: /metrics counts $(metric full) full, $(metric resumed) resumed"
echo "tls_resumption_test: ok"
