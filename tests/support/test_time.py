"""HELLO_TEST_TIME_SCALE for the Python tests, as tests/support/test_time.h
reads it for the C++ ones: scripts/test sets it for the slower builds
(--debug, --sanitize, --coverage), and a test multiplies the few upper
bounds on time it keeps, a Release build's, by it."""
import os


def time_scale():
    """How much longer than in a Release build a test may wait; 1 unless
    HELLO_TEST_TIME_SCALE holds a number of at least 1."""
    try:
        return max(1.0, float(os.environ.get("HELLO_TEST_TIME_SCALE", "1")))
    except ValueError:
        return 1.0
