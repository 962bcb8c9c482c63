"""README.md's persona table against servers/personas.txt, the one list.

The table is written by hand for people; this keeps its binaries and ports
the same as the file's: every framework persona is a row of the table, and
the calibration server (hello-floor) is the paragraph after it.
"""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from benchlib import targets  # noqa: E402


def personas_section():
    """The text of README.md's "## Personas" section."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    match = re.search(r"^## Personas\n(.*?)^## ", text, re.S | re.M)
    if not match:
        raise AssertionError("README.md has no '## Personas' section")
    return match.group(1)


def table_rows(section):
    """{name: port} of the table rows "| `hello-NAME` | answers like | PORT | routes |"."""
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] + ["", ""]
        binary = re.fullmatch(r"`hello-([a-z0-9]+)`", cells[0]) if line.startswith("|") else None
        if binary:
            rows[binary.group(1)] = int(cells[2]) if cells[2].isdigit() else cells[2]
    return rows


class ReadmePersonasTest(unittest.TestCase):
    def setUp(self):
        self.personas = targets.read_personas()
        self.section = personas_section()

    def test_table_lists_every_framework_persona_with_its_port(self):
        expected = {p.name: p.port for p in self.personas if p.kind == "framework"}
        self.assertTrue(expected, "no framework persona in servers/personas.txt")
        self.assertEqual(table_rows(self.section), expected,
                         "README.md's persona table and servers/personas.txt disagree")

    def test_calibration_server_paragraph_gives_its_port(self):
        calibration = [p for p in self.personas if p.kind == "calibration"]
        self.assertTrue(calibration, "no calibration persona in servers/personas.txt")
        for p in calibration:
            self.assertTrue(f"`hello-{p.name}` (port {p.port}," in self.section,
                            f"README.md's Personas section does not say "
                            f"\"`hello-{p.name}` (port {p.port},\"")


if __name__ == "__main__":
    unittest.main()
