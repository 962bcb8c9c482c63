# Article 001/003: Tornado, "Hello, world" on /, several processes.
import os

import tornado.httpserver
import tornado.ioloop
import tornado.web


class MainHandler(tornado.web.RequestHandler):
    def get(self):
        self.write("Hello, world")


if __name__ == "__main__":
    application = tornado.web.Application([(r"/", MainHandler)])
    server = tornado.httpserver.HTTPServer(application)
    server.bind(int(os.environ.get("PORT", 9093)))
    server.start(num_processes=int(os.environ.get("WORKERS", 2)))
    tornado.ioloop.IOLoop.current().start()
