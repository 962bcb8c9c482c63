#!/usr/bin/env bash
# tls_resume against `openssl s_server -www` on an ephemeral loopback port,
# with a certificate made for the run: resumption on and off, TLS 1.2 and
# 1.3, two threads, --duration, verification that holds and one that must
# fail, what each handshake negotiated and the tickets it received, with
# the client's suites and with a second s_server's (one ticket, ChaCha20,
# P-256 only); then against a small Python server that closes without
# close_notify (counted, resumption intact), a stopped server (a 5 s
# timeout, not a hang), a closed port and bad flags and suite lists, so the
# client is known to be able to fail. Every command is bounded by `timeout`, the whole by ctest's TIMEOUT.
#
#   usage: tls_resume_smoke.sh TLS_RESUME
set -euo pipefail

client=$1
tmp=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "tls_resume_smoke: $*" >&2
  exit 1
}

timeout 20 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>"$tmp/req.err" ||
  fail "openssl req: $(cat "$tmp/req.err")"

# wait_port FILE: the port a server wrote to FILE once it listens.
wait_port() {
  local port=
  for _ in $(seq 100); do
    port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$1")
    [[ -n $port ]] && break
    sleep 0.05
  done
  [[ -n $port ]] || fail "no server on $1: $(cat "$1")"
  echo "$port"
}

# -www answers each GET with "HTTP/1.0 200 ok" and a status page, whatever
# the headers, then closes (OpenSSL 3.0 sends close_notify first; older
# versions did not, so no_close_notify is not checked against it).
timeout 100 openssl s_server -accept 127.0.0.1:0 -cert "$tmp/cert.pem" -key "$tmp/key.pem" \
  -www >"$tmp/s_server.out" 2>&1 </dev/null &
servers+=("$!")
port=$(wait_port "$tmp/s_server.out")
# `timeout` is the job; openssl is its child, the one to stop below.
s_server=$(pgrep -P "${servers[0]}")
[[ -n $s_server ]] || fail "no openssl under timeout ${servers[0]}"

# run CODE PORT ARGS...: tls_resume --json; it must exit with CODE.
run() {
  local want=$1 at=$2 rc=0
  shift 2
  timeout 20 "$client" --port "$at" --json "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if ((rc != want)); then
    cat "$tmp/out" "$tmp/err" >&2
    fail "tls_resume $* exited $rc, not $want"
  fi
}
# check EXPR: EXPR holds for the last run's JSON, as r.
check() {
  timeout 10 python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$1" || { cat "$tmp/out" >&2; fail "not $1"; }
}
ok='r["failed"] == 0 and r["failures"] == {} and r["ok_200"] == r["connections"]'

# What OpenSSL 3.0 negotiates by default: its client offers AES-256-GCM
# first and an X25519 key share; its server sends two tickets after a full
# TLS 1.3 handshake, one after a resumed one, one in TLS 1.2 (not renewed).
aes256='TLSv1.3 TLS_AES_256_GCM_SHA384 x25519'
run 0 "$port" --count 20
check "$ok and r['connections'] == 20 and r['resumed'] == 19 and r['full'] == 1"
check "r['tls_versions'] == {'TLSv1.3': 20} and 0 < r['handshake_p50_ms'] <= r['total_p99_ms']"
check "r['negotiated'] == {'full': {'$aes256': 1}, 'resumed': {'$aes256': 19}}"
check "r['tickets'] == {'full': {'2': 1}, 'resumed': {'1': 19}}"
echo "resume:      $(cat "$tmp/out")"
run 0 "$port" --count 20 --no-resume
check "$ok and r['connections'] == 20 and r['resumed'] == 0 and r['full'] == 20"
check "r['negotiated'] == {'full': {'$aes256': 20}, 'resumed': {}}"
check "r['tickets'] == {'full': {'2': 20}, 'resumed': {}}"
echo "no-resume:   $(cat "$tmp/out")"
run 0 "$port" --count 20 --tls-max 1.2
check "$ok and r['resumed'] == 19 and r['tls_versions'] == {'TLSv1.2': 20}"
check "r['negotiated']['full'] == {'TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384 x25519': 1}"
check "r['tickets'] == {'full': {'1': 1}, 'resumed': {'0': 19}}"
# The client's suites: each one offered alone is the one negotiated.
for suite in TLS_AES_256_GCM_SHA384 TLS_AES_128_GCM_SHA256 TLS_CHACHA20_POLY1305_SHA256; do
  run 0 "$port" --count 3 --ciphersuites "$suite"
  check "$ok and r['negotiated'] == {'full': {'TLSv1.3 $suite x25519': 1}, 'resumed': {'TLSv1.3 $suite x25519': 2}}"
done
run 0 "$port" --count 3 --tls-max 1.2 --ciphers ECDHE-ECDSA-CHACHA20-POLY1305 --ciphersuites ''
check "$ok and list(r['negotiated']['full']) == ['TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305 x25519']"
run 0 "$port" --count 20 --threads 2
check "$ok and r['connections'] == 20 and r['resumed'] == 18 and r['full'] == 2"
run 0 "$port" --duration 0.5 --threads 2
check "$ok and r['connections'] >= 4 and r['full'] == 2 and 0.5 <= r['seconds'] < 5"

run 0 "$port" --count 5 --cafile "$tmp/cert.pem"
check "$ok and r['resumed'] == 4"
run 0 "$port" --count 2 --cafile "$tmp/cert.pem" --servername 127.0.0.1
check "$ok"
run 1 "$port" --count 5 --cafile "$tmp/cert.pem" --servername wrong.example
check "r['failed'] == 5 and r['failures'] == {'handshake: certificate verify failed (hostname mismatch)': 5}"
echo "wrong name:  $(cat "$tmp/out")"

# The server's choice: one ticket, ChaCha20-Poly1305 and P-256 only (a
# HelloRetryRequest for the client's X25519 share).
timeout 100 openssl s_server -accept 127.0.0.1:0 -cert "$tmp/cert.pem" -key "$tmp/key.pem" -www \
  -num_tickets 1 -ciphersuites TLS_CHACHA20_POLY1305_SHA256 -groups P-256 \
  >"$tmp/s_server2.out" 2>&1 </dev/null &
servers+=("$!")
port2=$(wait_port "$tmp/s_server2.out")
chacha='TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 secp256r1'
run 0 "$port2" --count 5
check "$ok and r['negotiated'] == {'full': {'$chacha': 1}, 'resumed': {'$chacha': 4}}"
check "r['tickets'] == {'full': {'1': 1}, 'resumed': {'1': 4}}"
echo "server's:    $(cat "$tmp/out")"
# Suites the server does not take: every handshake fails, none is counted.
run 1 "$port2" --count 2 --ciphersuites TLS_AES_256_GCM_SHA384
check "r['failed'] == 2 and r['negotiated'] == {'full': {}, 'resumed': {}} and r['tickets']['full'] == {}"

# A stopped server still completes the TCP handshake, then says nothing.
kill -STOP "$s_server"
run 1 "$port" --count 1
kill -CONT "$s_server"
check "r['failures'] == {'handshake: timed out': 1} and 4.5 < r['seconds'] < 10"
kill "${servers[0]}"
wait "${servers[0]}" 2>/dev/null || true
run 1 "$port" --count 3
check "r['failures'] == {'connect: Connection refused': 3} and r['resumed'] + r['full'] == 0"

# A server that closes after its answer without close_notify: no failure,
# and the sessions stay resumable.
cat >"$tmp/bare.py" <<'EOF'
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(f"ACCEPT 127.0.0.1:{listener.getsockname()[1]}", flush=True)
while True:
    raw, _ = listener.accept()
    raw.settimeout(5)
    tls = None
    try:
        tls = ctx.wrap_socket(raw, server_side=True)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = tls.recv(4096)
            if not chunk:
                break
            head += chunk
        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nhi\n")
    except OSError:
        pass
    # close() without unwrap(): no close_notify, only the TCP close.
    (tls or raw).close()
EOF
timeout 100 python3 "$tmp/bare.py" "$tmp/cert.pem" "$tmp/key.pem" >"$tmp/bare.out" 2>&1 </dev/null &
servers+=("$!")
bare_port=$(wait_port "$tmp/bare.out")
for version in 1.3 1.2; do
  run 0 "$bare_port" --count 20 --tls-max "$version"
  check "$ok and r['no_close_notify'] == 20 and r['resumed'] == 19 and r['full'] == 1"
done
# TLS 1.3's tickets, read with the answer before the bare close, are counted.
check "r['tickets'] == {'full': {'1': 1}, 'resumed': {'0': 19}}"
run 0 "$bare_port" --count 5
check "r['tickets'] == {'full': {'2': 1}, 'resumed': {'1': 4}}"
echo "bare close:  $(cat "$tmp/out")"

# A bad flag, a remote address or an unreadable --cafile: one line on stderr, exit 2.
for flags in "--count 5 --duration 1" "--tls-max 1.1" "--threads 0" "--count 2 --threads 3" \
  "--host 192.0.2.1" "--path x" "--cafile $tmp/none.pem" "--bogus"; do
  # shellcheck disable=SC2086
  run 2 "$port" $flags
  [[ $(wc -l <"$tmp/err") -eq 1 && ! -s $tmp/out ]] || fail "$flags: not one line on stderr"
done
# Suite lists OpenSSL refuses, or a name in one it does not know: the same.
for list in TLS_BOGUS TLS_AES_128_GCM_SHA256:TLS_BOGUS ''; do
  run 2 "$port" --ciphersuites "$list"
  [[ $(wc -l <"$tmp/err") -eq 1 && ! -s $tmp/out ]] || fail "--ciphersuites '$list': not one line on stderr"
done
run 2 "$port" --ciphers BOGUS
[[ $(wc -l <"$tmp/err") -eq 1 && ! -s $tmp/out ]] || fail "--ciphers BOGUS: not one line on stderr"
echo "tls_resume_smoke: ok"
