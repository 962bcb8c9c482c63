"""scripts/soak's WebSocket checks: the server's --stats-json "websocket"
counts against what the WebSocket clients saw."""


def check_websocket(summary, stats, failures):
    """Upgrades, messages (in: those echoed whole to the clients, and those
    whose echo a reset cut; not those the clients cut before their end),
    payload bytes (where no deflate was agreed) and close frames, exactly."""
    ws_stats = [s for kind, s in stats.items() if kind.startswith("ws-")]
    if not ws_stats or summary is None:
        return

    def got(key):
        return sum(s.get(key) for s in ws_stats)

    ws = summary.get("total", {}).get("websocket")
    if not isinstance(ws, dict):
        failures.append("--stats-json has no \"websocket\" object in its total")
        return
    messages = got("echoed") + got("echo_cut")
    payload = got("echoed_bytes") + got("echo_cut_bytes")
    expect = [
        ("upgraded", got("upgraded"), "handshakes the clients saw answered with a right 101"),
        ("messages_in", messages, f"{got('echoed')} echoes the clients saw whole, "
                                  f"{got('echo_cut')} cut by a reset once begun"),
        ("messages_out", messages, "as messages_in"),
        ("closes_received", got("closes") + got("closes_empty"), "close handshakes the clients made"),
        ("closes_sent_1000", got("closes"), "closes 1000 echoed to the clients"),
        ("closes_sent_other", got("closes_empty"), "empty closes echoed to the clients"),
    ]
    expect += [(f"closes_sent_{code}", 0, "no client asked for it") for code in (1001, 1002, 1007, 1008, 1009)]
    if not got("deflate_agreed"):
        expect += [("bytes_in", payload, "the payload bytes of those messages"),
                   ("bytes_out", payload, "as bytes_in")]
    print(f"server websocket: upgraded {ws.get('upgraded')}, messages in {ws.get('messages_in')} "
          f"out {ws.get('messages_out')}, bytes in {ws.get('bytes_in')}, closes received "
          f"{ws.get('closes_received')}, sent 1000 {ws.get('closes_sent_1000')} other "
          f"{ws.get('closes_sent_other')}; clients: upgraded {got('upgraded')}, echoes {got('echoed')} "
          f"(+{got('echo_cut')} cut in the echo, {got('cut')} cut before their end, not counted), "
          f"pongs {got('pongs')}, closes echoed {got('closes') + got('closes_empty')}, "
          f"deflate agreed {got('deflate_agreed')} declined {got('deflate_declined')}")
    for key, want, why in expect:
        if ws.get(key) != want:
            failures.append(f"--stats-json websocket.{key} is {ws.get(key)}, the clients expect {want} ({why})")
