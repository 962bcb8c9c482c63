"""Links of Markdown files: which they are, which headings and ids they
define (GitHub's anchors), and whether a relative link resolves. Read by
scripts/check-links (which checks them) and scripts/install-docs (which
unlinks, in the installed copy, what was not installed)."""
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target "title") and ![alt](target); the text may hold one level
# of brackets (an image inside a link), the target one level of parentheses.
INLINE_LINK = re.compile(
    r"!?\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*(?P<target><[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)", re.MULTILINE)
HTML_LINK = re.compile(r"<(?:a|img|source|link)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']",
                       re.IGNORECASE)
HTML_ID = re.compile(r"<[a-z][^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L(\d+)(?:-L(\d+))?$")


def markdown_lines(text):
    """Yields (line number, line, in_code) for each line of a Markdown text."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            yield number, line, True
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                fence = None
            yield number, line, True
        else:
            yield number, line, False


def heading_text(markdown):
    """The text GitHub renders for a heading's Markdown (what its slug is made of)."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = INLINE_LINK.sub(lambda m: m.group("text"), text)
    text = re.sub(r"<[^>]+>", "", text)
    # Emphasis markers: * always, _ only at a word's edge (snake_case stays).
    text = text.replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)
    return text.replace("\\", "")


def slug(text):
    """GitHub's anchor for a heading text, before de-duplication."""
    kept = []
    for char in text.strip().lower():
        if char in " -_" or unicodedata.category(char)[0] in "LN":
            kept.append("-" if char == " " else char)
    return "".join(kept)


def anchors_of(text):
    """Every anchor a Markdown text defines: heading slugs and HTML ids."""
    anchors = set()
    counts = {}
    previous = None
    for _number, line, in_code in markdown_lines(text):
        if in_code:
            previous = None
            continue
        headings = []
        match = HEADING.match(line)
        if match:
            headings.append(match.group(2))
        elif previous and previous.strip() and SETEXT_UNDERLINE.match(line) \
                and not re.match(r"^ {0,3}(\||-|\*|>|#)", previous):
            headings.append(previous.strip())
        for heading in headings:
            base = slug(heading_text(heading))
            seen = counts.get(base, 0)
            counts[base] = seen + 1
            anchors.add(base if seen == 0 else f"{base}-{seen}")
        anchors.update(HTML_ID.findall(line))
        previous = line
    return anchors


def paragraphs(text):
    """Yields (first line number, text, in_code) for each run of lines of a
    Markdown text: a paragraph (consecutive lines that are not blank, so
    that a link whose text is wrapped over two lines is read whole), a
    blank line, or a line of a code block. Joined with newlines, they are
    the text's lines again."""
    run, start = [], 0
    for number, line, in_code in markdown_lines(text):
        if not in_code and line.strip():
            start = start if run else number
            run.append(line)
            continue
        if run:
            yield start, "\n".join(run), False
            run = []
        yield number, line, in_code
    if run:
        yield start, "\n".join(run), False


def plain_text(paragraph):
    """The paragraph with its code spans blanked out (same length)."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), paragraph)


def links_of(text):
    """Yields (line number, target) for every link of a Markdown text."""
    for first, paragraph, in_code in paragraphs(text):
        if in_code:
            continue
        plain = plain_text(paragraph)
        found = [(m.start(1), m.group(1)) for m in REFERENCE_DEFINITION.finditer(plain)]
        found += [(m.start("target"), m.group("target")) for m in INLINE_LINK.finditer(plain)]
        found += [(m.start(1), m.group(1)) for m in HTML_LINK.finditer(plain)]
        for at, target in sorted(found):
            yield first + plain.count("\n", 0, at), target


def shown(path):
    """A path as a message shows it: relative to here, unless that climbs."""
    relative = os.path.relpath(path)
    return os.path.abspath(path) if relative.startswith("..") else relative


class Checker:
    """Checks links, reading each target file once."""

    def __init__(self):
        self.anchor_cache = {}
        self.length_cache = {}

    def anchors(self, path):
        if path not in self.anchor_cache:
            with open(path, encoding="utf-8") as f:
                self.anchor_cache[path] = anchors_of(f.read())
        return self.anchor_cache[path]

    def line_count(self, path):
        if path not in self.length_cache:
            with open(path, "rb") as f:
                self.length_cache[path] = f.read().count(b"\n") + 1
        return self.length_cache[path]

    def problem(self, source, target):
        """Why a link from the file source to target is broken, or None."""
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if not target or SCHEME.match(target) or target.startswith("//"):
            return None
        path, _, fragment = target.partition("#")
        path = unquote(path.split("?", 1)[0])
        if path.startswith("/"):
            return "an absolute path (breaks once the files move; make it relative)"
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
        if not os.path.exists(resolved):
            return f"no such file or folder ({shown(resolved)})"
        if not fragment:
            return None
        fragment = unquote(fragment)
        if os.path.isdir(resolved):
            return "an anchor into a folder"
        if resolved.endswith(".md"):
            if fragment in self.anchors(resolved):
                return None
            return f"no heading or id '{fragment}' in {shown(resolved)}"
        lines = LINE_ANCHOR.match(fragment)
        if not lines:
            return f"an anchor into a file that is not Markdown ({shown(resolved)})"
        last = max(int(lines.group(1)), int(lines.group(2) or 0))
        if last > self.line_count(resolved):
            return f"line {last} is past the end of {shown(resolved)}"
        return None

    def check_file(self, source):
        """The broken links of one Markdown file, as printable lines."""
        with open(source, encoding="utf-8") as f:
            text = f.read()
        broken = []
        for number, target in links_of(text):
            why = self.problem(source, target)
            if why:
                broken.append(f"{source}:{number}: {target}: {why}")
        return broken


def markdown_files(paths):
    """The Markdown files named or under the folders named, sorted, or None for a missing path."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            for folder, subfolders, names in os.walk(path):
                subfolders.sort()
                files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".md"))
        elif os.path.isfile(path):
            files.append(path)
        else:
            print(f"check-links: {path}: no such file or folder", file=sys.stderr)
            return None
    return files


def unlink(text, replace):
    """The Markdown text with each inline link or image for which
    replace(link_text, target) returns a string replaced by that string
    (None keeps the link); code blocks and code spans are left as they are."""
    out = []
    for _first, paragraph, in_code in paragraphs(text):
        if in_code:
            out.append(paragraph)
            continue
        pieces, at = [], 0
        for match in INLINE_LINK.finditer(plain_text(paragraph)):
            replacement = replace(paragraph[match.start("text"):match.end("text")], match.group("target"))
            if replacement is not None:
                pieces += [paragraph[at:match.start()], replacement]
                at = match.end()
        out.append("".join(pieces) + paragraph[at:])
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
