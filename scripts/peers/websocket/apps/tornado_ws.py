# Tornado 6.2 WebSocket echo at /websocket, the path Tornado's own
# WebSocketHandler docstring maps its EchoWebSocket to (tornado/websocket.py:181).
# Everything at its default: no compression (get_compression_options() is None),
# no pings, 10 MiB max message. One process, loopback.
import os

import tornado.ioloop
import tornado.web
import tornado.websocket


class EchoWebSocket(tornado.websocket.WebSocketHandler):
    def on_message(self, message):
        self.write_message(message, binary=isinstance(message, bytes))


if __name__ == "__main__":
    app = tornado.web.Application([(r"/websocket", EchoWebSocket)])
    app.listen(int(os.environ["PORT"]), address="127.0.0.1")
    tornado.ioloop.IOLoop.current().start()
