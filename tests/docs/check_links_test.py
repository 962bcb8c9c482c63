"""Unit tests of scripts/check-links (scripts/doclinks.py) on made-up trees:
GitHub's heading slugs, what is a link and what is code, one line per
broken link with its reason and the exit status; and of scripts/install-docs,
which unlinks what was not installed."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)

import doclinks  # noqa: E402

GOOD = """\
    # Good

    ## The access log as JSON (`--access-log-format json`)
    ## Spring's row: Tomcat 10.1 with a servlet
    ## `--admin HOST:PORT`
    ## *Emphasis* and snake_case_name
    ## Twice
    ## Twice
    Setext heading
    --------------
    <a id="custom-id"></a>

    [json](#the-access-log-as-json---access-log-format-json), [row](#springs-row-tomcat-101-with-a-servlet),
    [admin](#--admin-hostport), [emph](#emphasis-and-snake_case_name), [second](#twice-1), [setext](#setext-heading),
    [custom](#custom-id), [other](sub/other.md#far-away), ![image](sub/pic.png "a title"),
    [folder](sub/), [lines](sub/data.txt#L2-L3), [web](https://example.org/nothing#x), [mail](mailto:a@b.c),
    [spaced](<sub/other.md>), [escaped](sub/other%2Emd), `[code](missing.md)`

    ```sh
    [fenced](missing.md)
    ```
"""
BAD = """\
    # Bad

    [gone](nothing.md) and [anchor](#nowhere)
    [far](sub/other.md#near) [dir](sub/#x) [past](sub/data.txt#L9)
    [absolute](/etc/passwd) [nonmd](sub/data.txt#section)

    A [link whose text
    is wrapped](wrapped.md) over two lines.
"""


def write(root, name, text):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))
    return path


def tree(root, bad=False):
    write(root, "good.md", GOOD)
    write(root, "sub/other.md", "# Far away\n\n[back](../good.md#twice)\n")
    write(root, "sub/pic.png", "not really a png")
    write(root, "sub/data.txt", "one\ntwo\nthree\n")
    if bad:
        write(root, "bad.md", BAD)


def check_links(*paths):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "check-links"), *paths],
                          capture_output=True, text=True, timeout=60)


class SlugTest(unittest.TestCase):
    def test_github_slugs(self):
        cases = {
            "The access log as JSON (`--access-log-format json`)": "the-access-log-as-json---access-log-format-json",
            "Spring's row: Tomcat 10.1 with a servlet": "springs-row-tomcat-101-with-a-servlet",
            "HTTPS (`scripts/bench --tls`)": "https-scriptsbench---tls",
            "**Bold** [a link](x.md) and snake_case": "bold-a-link-and-snake_case",
            "Ünïcode stays": "ünïcode-stays",
        }
        for heading, slug in cases.items():
            self.assertEqual(doclinks.slug(doclinks.heading_text(heading)), slug, heading)

    def test_repeats_and_code(self):
        anchors = doclinks.anchors_of("# A\n# A\n```\n# B\n```\n# A\n")
        self.assertEqual(anchors, {"a", "a-1", "a-2"})


class CheckLinksTest(unittest.TestCase):
    def test_good_tree_passes(self):
        with tempfile.TemporaryDirectory() as root:
            tree(root)
            done = check_links(root)
            self.assertEqual((done.returncode, done.stdout), (0, ""), done.stderr)
            self.assertIn("2 files, 16 links, 0 broken", done.stderr)

    def test_each_broken_link_is_one_line(self):
        with tempfile.TemporaryDirectory() as root:
            tree(root, bad=True)
            done = check_links(os.path.join(root, "bad.md"), os.path.join(root, "good.md"))
            self.assertEqual(done.returncode, 1, done.stderr)
            bad = os.path.join(root, "bad.md")
            lines = done.stdout.splitlines()
            expected = [
                (3, "nothing.md", "no such file or folder"),
                (3, "#nowhere", "no heading or id 'nowhere' in"),
                (4, "sub/other.md#near", "no heading or id 'near' in"),
                (4, "sub/#x", "an anchor into a folder"),
                (4, "sub/data.txt#L9", "line 9 is past the end of"),
                (5, "/etc/passwd", "an absolute path"),
                (5, "sub/data.txt#section", "an anchor into a file that is not Markdown"),
                (8, "wrapped.md", "no such file or folder"),
            ]
            self.assertEqual(len(lines), len(expected), done.stdout)
            for line, (number, target, why) in zip(lines, expected):
                self.assertTrue(line.startswith(f"{bad}:{number}: {target}: {why}"), line)

    def test_missing_path(self):
        done = check_links("/nonexistent/docs")
        self.assertEqual(done.returncode, 2)
        self.assertIn("no such file or folder", done.stderr)


class InstallDocsTest(unittest.TestCase):
    def test_unlinks_what_was_not_installed(self):
        with tempfile.TemporaryDirectory() as root:
            page = write(root, "docs/page.md", """\
                See [the unit](../packaging/x.service), [its README](../tools/README.md),
                [kept](../README.md#top) and `[code](../gone.md)`, [a wrapped
                one](../gone.md).

                ```
                [fenced](../gone.md)
                ```
                """)
            write(root, "README.md", "# Top\n")
            done = subprocess.run([sys.executable, os.path.join(SCRIPTS, "install-docs"), root],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(check_links(root).returncode, 0)
            with open(page, encoding="utf-8") as f:
                self.assertEqual(f.read(), textwrap.dedent("""\
                    See the unit (packaging/x.service in the source), its README (tools/README.md in the source),
                    [kept](../README.md#top) and `[code](../gone.md)`, a wrapped
                    one (gone.md in the source).

                    ```
                    [fenced](../gone.md)
                    ```
                    """))


if __name__ == "__main__":
    unittest.main()
