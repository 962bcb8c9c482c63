"""Unit tests of scripts/mutants' list (scripts/mutantlib/mutant_list.py):
the format read back, each mistake refused with its line, stale mutants
found; and tests/mutants/mutants.txt itself, which must parse and whose
every mutant must still find its text exactly once in this tree (run by
ctest, so a change that rewrites a mutated line says so at once, without
running the mutants)."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from mutantlib.mutant_list import MutantError, check_fresh, parse_list  # noqa: E402

GOOD = """# a comment
[first]
file: a.cc
rule: the limit is 4
tests: unit_tests Suite.*
tests: integration_tests Other.One
from:   if (n > 4)
    |     return 413;
    |
to:   if (n > 5)
timeout: 60

[second.one]
file: b.cc
rule: counted
tests: unit_tests *
from: ++count;
to: (void)count;
"""


def parse_text(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        return parse_list(f.name)
    finally:
        os.unlink(f.name)


class FormatTest(unittest.TestCase):
    def test_every_key_is_read_back(self):
        first, second = parse_text(GOOD)
        self.assertEqual((first.id, first.line, first.file), ("first", 2, "a.cc"))
        self.assertEqual(first.rule, "the limit is 4")
        self.assertEqual(first.original, "  if (n > 4)\n    return 413;\n")
        self.assertEqual(first.replacement, "  if (n > 5)")
        self.assertEqual(first.timeout, 60)
        self.assertEqual([c.text() for c in first.tests],
                         ["unit_tests --gtest_filter=Suite.*",
                          "integration_tests --gtest_filter=Other.One"])
        self.assertEqual((second.id, second.original, second.replacement, second.timeout),
                         ("second.one", "++count;", "(void)count;", 0))

    def assertRefused(self, text, says):
        with self.assertRaises(MutantError) as caught:
            parse_text(text)
        self.assertIn(says, str(caught.exception))

    def test_mistakes_are_refused_with_their_line(self):
        self.assertRefused("file: a.cc\n", ":1: text before the first [id]")
        self.assertRefused(GOOD + "\n[x]\nfile: a\nrule: r\nwhat: 1\n", ":23: expected one of")
        self.assertRefused(GOOD + "\n[x]\nfile: a\n  | more\n", ":22: a '|' line continues only")
        self.assertRefused(GOOD + "\n[x]\nfile: a\ntimeout: soon\n", ":22: timeout is a whole")
        self.assertRefused(GOOD + "\n[x]\nfile: a\ntests: unit_tests\n", ":22: tests: BINARY")
        self.assertRefused(GOOD.replace("[second.one]", "[first]"), "[first]: id given twice")
        self.assertRefused(GOOD.replace("rule: counted\n", ""), "[second.one]: no rule:")
        self.assertRefused(GOOD.replace("to: (void)count;", "to: ++count;"),
                           "[second.one]: to: is the same as from:")
        self.assertRefused(GOOD.replace("tests: unit_tests *\n", ""), "[second.one]: no tests:")


class FreshnessTest(unittest.TestCase):
    def test_a_text_found_twice_or_not_at_all_is_stale(self):
        first, second = parse_text(GOOD)
        with tempfile.TemporaryDirectory() as tree:
            Path(tree, "a.cc").write_text("x\n  if (n > 4)\n    return 413;\n\ny\n")
            Path(tree, "b.cc").write_text("++count;\n")
            check_fresh([first, second], tree)
            Path(tree, "b.cc").write_text("++count; ++count;\n")
            with self.assertRaises(MutantError) as caught:
                check_fresh([first, second], tree)
            self.assertIn("[second.one]: its from: text is 2 times in b.cc", str(caught.exception))
            Path(tree, "a.cc").write_text("  if (n > 4) return 413;\n")
            with self.assertRaises(MutantError) as caught:
                check_fresh([first], tree)
            self.assertIn("[first]: its from: text is 0 times in a.cc", str(caught.exception))


class TheListTest(unittest.TestCase):
    def test_the_list_parses_and_every_mutant_is_fresh(self):
        mutants = parse_list(ROOT / "tests" / "mutants" / "mutants.txt")
        self.assertGreaterEqual(len(mutants), 40)
        check_fresh(mutants, ROOT)
        # Several mutants for each file the list covers.
        for name in ("http1/request_reader.cc", "http2/h2_session.cc", "tls/tls_transport.cc",
                     "server/connection.cc", "shaping/shape.cc", "persona/routes_file.cc",
                     "observe/accounting.cc"):
            count = sum(1 for m in mutants if m.file == "common/" + name)
            self.assertGreaterEqual(count, 3, name)


if __name__ == "__main__":
    unittest.main()
