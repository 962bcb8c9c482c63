"""tests/mutants/mutants.txt: its blocks read into Mutants, and the check
that each one's original text is still in its file, exactly once."""

import re
from dataclasses import dataclass, field
from pathlib import Path

KEYS = ("file", "rule", "tests", "from", "to", "timeout")


class MutantError(Exception):
    """A problem with the list, the tree or the setup: reported, exit 2."""


@dataclass
class TestCommand:
    binary: str  # a CMake target that is a GoogleTest executable
    gtest_filter: str

    def text(self):
        return f"{self.binary} --gtest_filter={self.gtest_filter}"


@dataclass
class Mutant:
    id: str
    line: int  # where its block starts in the list
    file: str = ""
    rule: str = ""
    original: str = ""
    replacement: str = ""
    tests: list = field(default_factory=list)
    timeout: int = 0  # seconds per test command; 0: the run's --timeout


def _set(mutant, key, value, where):
    if key == "file":
        mutant.file = value.strip()
    elif key == "rule":
        mutant.rule = value.strip()
    elif key == "from":
        mutant.original = value
    elif key == "to":
        mutant.replacement = value
    elif key == "timeout":
        if not value.strip().isdigit():
            raise MutantError(f"{where}: timeout is a whole number of seconds")
        mutant.timeout = int(value)
    elif key == "tests":
        parts = value.split()
        if len(parts) != 2:
            raise MutantError(f"{where}: tests: BINARY GTEST_FILTER")
        mutant.tests.append(TestCommand(parts[0], parts[1]))


def _check(mutants, path):
    seen = set()
    for m in mutants:
        problems = []
        if m.id in seen:
            problems.append("id given twice")
        seen.add(m.id)
        for name, value in (("file", m.file), ("rule", m.rule), ("from", m.original)):
            if not value:
                problems.append(f"no {name}:")
        if not m.tests:
            problems.append("no tests:")
        if m.original == m.replacement:
            problems.append("to: is the same as from:")
        if problems:
            raise MutantError(f"{path}:{m.line}: [{m.id}]: {'; '.join(problems)}")


def parse_list(path):
    """Reads the mutant list. A block starts with "[id]"; then "key: value"
    lines; a line of blanks then "|" continues the from: or to: above it on
    a new line ("| " then the text). A line starting with "#" is a comment."""
    try:
        lines = Path(path).read_text().split("\n")
    except OSError as e:
        raise MutantError(f"{path}: cannot read: {e.strerror}")
    mutants = []
    current = None
    last_key = None
    for number, raw in enumerate(lines, 1):
        where = f"{path}:{number}"
        if raw.strip() == "":
            last_key = None
            continue
        if raw.lstrip().startswith("#"):
            continue
        header = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]\s*", raw)
        if header:
            current = Mutant(id=header.group(1), line=number)
            mutants.append(current)
            last_key = None
            continue
        if current is None:
            raise MutantError(f"{where}: text before the first [id]")
        continuation = re.fullmatch(r"\s+\| ?(.*)", raw)
        if continuation:
            if last_key == "from":
                current.original += "\n" + continuation.group(1)
            elif last_key == "to":
                current.replacement += "\n" + continuation.group(1)
            else:
                raise MutantError(f"{where}: a '|' line continues only from: or to:")
            continue
        pair = re.fullmatch(r"([a-z]+): ?(.*)", raw)
        if not pair or pair.group(1) not in KEYS:
            raise MutantError(f"{where}: expected one of {', '.join(KEYS)} as 'key: value'")
        last_key = pair.group(1)
        _set(current, last_key, pair.group(2), where)
    _check(mutants, path)
    return mutants


def check_fresh(mutants, tree):
    """Each mutant's original text must occur exactly once in its file
    under `tree`; raises MutantError listing the stale ones."""
    stale = []
    for m in mutants:
        path = Path(tree) / m.file
        if not path.is_file():
            stale.append(f"[{m.id}]: {m.file} does not exist")
            continue
        count = path.read_text().count(m.original)
        if count != 1:
            stale.append(f"[{m.id}]: its from: text is {count} times in {m.file}, not once")
    if stale:
        raise MutantError("stale mutants (update tests/mutants/mutants.txt):\n  " +
                          "\n  ".join(stale))
