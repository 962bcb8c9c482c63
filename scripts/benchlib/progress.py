"""The place of each run in a long bench run and the time left, for the
line every run prints: "[12/48, about 9 min left]"."""
import time


def left_text(seconds):
    """A rough time left: "about 40 s left", "about 9 min left"."""
    if seconds < 10:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 55:
        return f"about {round(seconds / 10) * 10} s left"
    return f"about {max(1, round(seconds / 60))} min left"


class Progress:
    """Counts the runs of a bench run. `total` is the runs planned (a target
    that does not start gives its runs back with skip()); until a run has
    finished, each is guessed to take `guess` seconds, then the time so far
    per run finished is what the rest will take."""

    def __init__(self, total, guess, clock=time.monotonic):
        self.total = total
        self.done = 0
        self.guess = guess
        self.clock = clock
        self.started = clock()

    def add(self, runs):
        self.total += runs

    def skip(self, runs):
        self.total = max(self.done, self.total - runs)

    def left(self):
        """Seconds left, by the runs finished so far."""
        rest = self.total - self.done
        per_run = (self.clock() - self.started) / self.done if self.done else self.guess
        return rest * per_run

    def step(self):
        """One more run finished: its tag, "[12/48, about 9 min left]"."""
        self.done += 1
        self.total = max(self.total, self.done)
        if self.done == self.total:
            return f"[{self.done}/{self.total}]"
        return f"[{self.done}/{self.total}, {left_text(self.left())}]"
