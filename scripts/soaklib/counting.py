"""What scripts/soak's clients share: each kind's counts and kept errors,
the control that parks and stops every thread, a pacer, and the run's
environment."""
import threading
import time

from .settings import ERRORS_KEPT, ROUTES, WEBSOCKET
from .wire import Conn


class KindStats:
    """What the clients of one kind sent and got; shared by its threads."""

    def __init__(self, kind):
        self.kind = kind
        self.lock = threading.Lock()
        self.counts = {}
        self.errors = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def get(self, key):
        with self.lock:
            return self.counts.get(key, 0)

    def problem(self, key, what, message):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            if len(self.errors) < ERRORS_KEPT:
                self.errors.append(f"{key} ({what}): {message}")


class Control:
    """Run, pause (clients close everything and park) or stop."""

    def __init__(self, threads, hard_deadline):
        self.cv = threading.Condition()
        self.state = "run"
        self.threads = threads
        self.parked = 0
        self.done = 0
        self.hard_deadline = hard_deadline

    def yielding(self):
        """True when a client should finish what it does and close."""
        return self.state != "run" or time.monotonic() > self.hard_deadline

    def proceed(self):
        """Called with no connection open: parks while paused; False to stop."""
        with self.cv:
            if self.state == "pause":
                self.parked += 1
                self.cv.notify_all()
                while self.state == "pause" and time.monotonic() < self.hard_deadline:
                    self.cv.wait(0.5)
                self.parked -= 1
            return self.state == "run" and time.monotonic() < self.hard_deadline

    def finished(self):
        with self.cv:
            self.done += 1
            self.cv.notify_all()

    def set(self, state):
        with self.cv:
            self.state = state
            self.cv.notify_all()

    def wait_parked(self, timeout):
        end = time.monotonic() + timeout
        with self.cv:
            while self.parked + self.done < self.threads:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(min(left, 0.2))
            return True


class Pacer:
    def __init__(self, rate):
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = time.monotonic()

    def wait(self):
        if not self.interval:
            return
        now = time.monotonic()
        if self.next < now - 1.0:
            self.next = now
        if self.next > now:
            time.sleep(self.next - now)
        self.next += self.interval


class Env:
    def __init__(self, port, persona, ctl, seconds):
        self.port = port
        self.routes = ROUTES[persona]
        self.ctl = ctl
        self.seconds = seconds   # with bound(), the most iterations of a loop
        self.ws_path, self.ws_max = WEBSOCKET.get(persona, (None, 0))


def connect(env, st):
    """A new connection, or None (counted as lost, after a pause) if refused."""
    try:
        return Conn(env.port, st)
    except OSError as e:
        st.problem("lost", "connect", str(e))
        time.sleep(0.1)
        return None


def bound(rate, seconds):
    """The most iterations a loop at this rate may make in the run."""
    return int(rate * (seconds + 60) * 2) + 100
