# Article 002: aiohttp, "Hello World" on /index.
import os

from aiohttp import web

routes = web.RouteTableDef()


@routes.get("/index")
async def index(request):
    return web.Response(text="Hello World")


if __name__ == '__main__':
    app = web.Application()
    app.add_routes(routes)
    web.run_app(app, port=int(os.environ.get("PORT", 8080)))
