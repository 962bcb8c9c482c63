# Starlette 0.26 WebSocketRoute echo at /ws (Starlette's routing docs use
# WebSocketRoute("/ws", ...)), on uvicorn 0.17.6 with its defaults: ws="auto"
# (websockets if importable, else wsproto: Debian 12 here has only wsproto),
# http="auto" (httptools if importable, else h11), ws_per_message_deflate=True.
import os

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute


async def echo(websocket):
    await websocket.accept()
    while True:
        msg = await websocket.receive()
        if msg["type"] == "websocket.disconnect":
            break
        if msg.get("text") is not None:
            await websocket.send_text(msg["text"])
        else:
            await websocket.send_bytes(msg["bytes"])


app = Starlette(routes=[WebSocketRoute("/ws", echo)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]),
                ws=os.environ.get("UVICORN_WS", "auto"))
