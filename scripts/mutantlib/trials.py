"""The run: the baseline on the unmutated build, then each mutant applied,
built, tested and taken back, one line printed for each."""

import time

from .mutant_list import MutantError, check_fresh


def baseline(tree, mutants, timeout):
    """Every test command passes on the unmutated tree and selects a test
    (a filter that selects nothing would let every mutant survive)."""
    commands = {}
    for m in mutants:
        for c in m.tests:
            commands.setdefault(c.text(), (c, m.timeout or timeout))
    problems = []
    for text, (command, limit) in commands.items():
        if tree.count_tests(command) == 0:
            problems.append(f"{text}: selects no test")
            continue
        result = tree.test(command, limit)
        if result != "pass":
            problems.append(f"{text}: {result} on the unmutated tree")
    if problems:
        raise MutantError(f"the baseline does not hold (see {tree.log}):\n  " +
                          "\n  ".join(problems))
    return len(commands)


def try_mutant(tree, m, timeout):
    """Applies `m`, builds, tests, restores: (verdict, why)."""
    path = tree.src / m.file
    original = path.read_text()
    path.write_text(original.replace(m.original, m.replacement, 1))
    try:
        if not tree.build_targets(sorted({c.binary for c in m.tests})):
            return "invalid", "did not build"
        for c in m.tests:
            result = tree.test(c, m.timeout or timeout)
            if result != "pass":
                return "killed", f"{c.text()}: {result}"
        return "survived", ""
    finally:
        path.write_text(original)


def run_all(tree, mutants, rev, timeout):
    """Builds, checks the baseline, tries every mutant; returns the counts
    of killed, survived and invalid."""
    started = time.monotonic()
    tree.unpack(rev)
    check_fresh(mutants, tree.src)
    print(f"mutants: {len(mutants)} mutants; building {rev} in {tree.scratch} (log: {tree.log})",
          flush=True)
    tree.configure()
    targets = sorted({c.binary for m in mutants for c in m.tests})
    if not tree.build_targets(targets):
        raise MutantError(f"the unmutated tree does not build: see {tree.log}")
    built = time.monotonic()
    commands = baseline(tree, mutants, timeout)
    print(f"mutants: built in {built - started:.0f} s; {commands} test commands pass unmutated",
          flush=True)
    counts = {"killed": 0, "survived": 0, "invalid": 0}
    width = max(len(m.id) for m in mutants)
    for m in mutants:
        began = time.monotonic()
        verdict, why = try_mutant(tree, m, timeout)
        counts[verdict] += 1
        print(f"{verdict:8}  {m.id:{width}}  {m.file}  {m.rule}  "
              f"({time.monotonic() - began:.0f} s)", flush=True)
        if verdict == "invalid":
            print(f"          {why}: see {tree.log}", flush=True)
    # The tree as committed again, so that a kept build is a clean one.
    tree.build_targets(targets)
    minutes, seconds = divmod(int(time.monotonic() - started), 60)
    print(f"mutants: {len(mutants)} run: {counts['killed']} killed, {counts['survived']} "
          f"survived, {counts['invalid']} invalid, in {minutes} min {seconds} s", flush=True)
    return counts
