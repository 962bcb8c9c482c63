#!/usr/bin/env python3
"""Prints gcovr's JSON summary as a table: every file with its line and
branch figures, then the totals on the last line (scripts/test --coverage)."""
import json
import sys


def figure(covered, total):
    """'covered/total (percent%)', or '-' for a file with nothing to count."""
    if total == 0:
        return "-"
    return f"{covered}/{total} ({100.0 * covered / total:.1f}%)"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: coverage_summary.py coverage/summary.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        summary = json.load(f)
    files = sorted(summary["files"], key=lambda entry: entry["filename"])
    if not files:
        sys.exit("coverage_summary.py: no file of common/ in the report (no .gcda written?)")
    width = max(len(entry["filename"]) for entry in files)
    print(f"{'file':<{width}}  {'lines':>22}  {'branches':>22}")
    for entry in files:
        lines = figure(entry["line_covered"], entry["line_total"])
        branches = figure(entry["branch_covered"], entry["branch_total"])
        print(f"{entry['filename']:<{width}}  {lines:>22}  {branches:>22}")
    lines = figure(summary["line_covered"], summary["line_total"])
    branches = figure(summary["branch_covered"], summary["branch_total"])
    print(f"{'TOTAL (' + str(len(files)) + ' files)':<{width}}  {lines:>22}  {branches:>22}")


if __name__ == "__main__":
    main()
