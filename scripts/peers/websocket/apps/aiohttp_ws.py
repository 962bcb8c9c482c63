# aiohttp 3.8 WebSocket echo at /ws, the path of aiohttp's server docs
# (web_quickstart "WebSockets"). WebSocketResponse() with every default:
# compress=True, max_msg_size=4 MiB, heartbeat=None, autoping=True.
import os

from aiohttp import WSMsgType, web


async def websocket_handler(request):
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            await ws.send_str(msg.data)
        elif msg.type == WSMsgType.BINARY:
            await ws.send_bytes(msg.data)
    return ws


if __name__ == "__main__":
    app = web.Application()
    app.add_routes([web.get("/ws", websocket_handler)])
    web.run_app(app, host="127.0.0.1", port=int(os.environ["PORT"]), print=None)
