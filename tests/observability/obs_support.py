"""What the observability tests share: a free loopback port, a GET, and a
bounded wait for a URL to answer. Imported by the tests beside it."""
import socket
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(url, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            get(url, timeout=1)
            return True
        except OSError:
            time.sleep(0.1)
    return False
