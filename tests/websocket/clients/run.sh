#!/usr/bin/env bash
# Real WebSocket clients (python3-websockets, python3-wsproto, Node's ws,
# gorilla/websocket, curl's handshake) against every WebSocket persona of
# BUILD_DIR, in clear and over TLS: run.py, niced and bounded (README.md).
# ctest runs it as ws_real_clients (tests/CMakeLists.txt).
#
#   usage: run.sh BUILD_DIR [run.py's options: --cache DIR, --persona NAME, --client NAME]
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [--cache DIR] [--persona NAME]... [--client NAME]..." >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
exec nice -n 10 timeout -k 10 280 /usr/bin/python3 "$here/run.py" "$@"
