# Article 000: Flask, "Hello!!!" on /.
import os

from flask import Flask

app = Flask(__name__)


@app.route('/')
def hello_world():
    return "Hello!!!"


if __name__ == '__main__':
    app.run('0.0.0.0', port=int(os.environ.get("PORT", 5000)), debug=False)
