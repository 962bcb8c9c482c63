"""unittest.main for the test files ctest runs: a file some of whose tests
were skipped (a tool not installed) exits 77, ctest's SKIP_RETURN_CODE
(tests/CMakeLists.txt), so that ctest reports it as skipped, not passed;
each skipped test and its reason is printed. A failure exits 1, and so does
a run in which no test ran."""
import sys
import unittest


def main():
    result = unittest.main(module="__main__", exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun == 0:
        print("FAIL: no test ran")
        sys.exit(1)
    if result.skipped:
        for test, reason in result.skipped:
            print(f"SKIP: {test.id()}: {reason}")
        print(f"SKIPPED: {len(result.skipped)} of {result.testsRun} tests did not run")
        sys.exit(77)
    sys.exit(0)
