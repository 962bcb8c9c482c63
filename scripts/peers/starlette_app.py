# Article 002: Starlette on uvicorn, {"hello": "world"} on /index.
import os

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from uvicorn.main import run


async def index(request):
    return JSONResponse({'hello': 'world'})

app = Starlette(debug=True, routes=[Route('/index', index), ])

if __name__ == "__main__":
    run(app, host="0.0.0.0", port=int(os.environ.get("PORT", 8000)))
