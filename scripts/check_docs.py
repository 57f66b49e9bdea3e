#!/usr/bin/python3
"""What review cannot keep by reading, for the documentation (scripts/check_docs.sh runs this).

Fails, naming each file and line, on:
  (a) a Markdown link in README.md, CHANGELOG.md or docs/*.md whose target file does not exist,
      or whose #anchor is not a heading of that file (GitHub's rules: lowercase, spaces to "-",
      punctuation dropped, "-1", "-2" for repeated headings);
  (b) a quoted section reference anywhere in the repository, `README.md "Heading"` or
      `docs/<file>.md "Heading"` (a comma may stand between them; `README "Heading"` counts as
      README.md), whose heading does not exist in that file;
  (c) an internal issue number (`#12`, `(#12)`, `issue 12`, `issue #12`) in README.md,
      CHANGELOG.md, docs/*.md, or a C++ string literal of cli/.
Usage: check_docs.py [ROOT]  (default: the repository this script is in). Standard library only.
"""
import os
import re
import subprocess
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SKIP_DIRS = {".git", "build", "out", "node_modules"}
problems = []


def report(path, line, message):
    problems.append(f"{path}:{line}: {message}")


def repository_files():
    """Tracked and untracked-but-not-ignored files, relative to ROOT (every file outside git)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             capture_output=True, check=True).stdout.decode()
        return sorted(p for p in set(out.split("\0")) if p and os.path.isfile(os.path.join(ROOT, p)))
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            found += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]
        return sorted(found)


def read(path):
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


def outside_fences(text):
    """(line number, line) of every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        marker = re.match(r"(```+|~~~+)", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif stripped.startswith(fence):
                fence = None
        elif fence is None:
            yield number, line


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code spans blanked."""
    for number, line in outside_fences(text):
        yield number, re.sub(r"`+[^`]*`+", lambda m: " " * len(m.group(0)), line)


def headings(text):
    """The ATX headings' texts, in order, outside fenced code blocks."""
    found = []
    for _, line in outside_fences(text):
        m = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            found.append(m.group(1))
    return found


def slug(heading):
    """GitHub's anchor of a heading: rendered text, lowercase, punctuation dropped, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = text.lower()
    kept = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LMN"
                   or unicodedata.category(c) == "Pc")
    return kept.replace(" ", "-")


def anchors(text):
    seen, result = {}, set()
    for heading in headings(text):
        base = slug(heading)
        n = seen.get(base, 0)
        result.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return result


def normal(text):
    return re.sub(r"\s+", " ", text).strip()


files = repository_files()
docs = [p for p in files if p in ("README.md", "CHANGELOG.md")
        or (p.startswith("docs/") and p.endswith(".md") and "/" not in p[len("docs/"):])]
texts = {p: read(p) for p in files if p.endswith(".md")}

# (a) Markdown links.
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
for path in docs:
    folder = os.path.dirname(path)
    for number, line in prose_lines(texts[path] or ""):
        for m in LINK.finditer(line):
            target = m.group(1)
            if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            linked = os.path.normpath(os.path.join(folder, file_part)) if file_part else path
            if file_part and not os.path.exists(os.path.join(ROOT, linked)):
                report(path, number, f"link to {target}: {linked} does not exist")
                continue
            if anchor:
                if not linked.endswith(".md") or linked not in texts or texts[linked] is None:
                    report(path, number, f"link to {target}: #{anchor} names no heading ({linked} is not Markdown)")
                elif anchor not in anchors(texts[linked]):
                    report(path, number, f"link to {target}: {linked} has no heading with the anchor #{anchor}")

# (b) Quoted section references, anywhere.
# A heading starts with a capital letter or a backtick, is at most 100 characters; the reference
# may wrap onto the next line of a comment (its "#", "//" or "*" is dropped).
REFERENCE = re.compile(
    r"(?<![\w/.-])((?:docs/)?[A-Za-z0-9_-]+\.md|README)\s*,?\s*(?:(?:#|//|\*)[ \t]*)?\\?\"([A-Z`](?:[^\"\\\n]|\n[ \t]*(?:#|//|\*|;|--)?[ \t]*){0,99}?)\\?\"")
PLACEHOLDER = "Heading"  # how this checker's own docs write the form
heading_cache = {}
for path in files:
    text = read(path) if not path.endswith(".md") else texts.get(path)
    if text is None or ".md" not in text and "README" not in text:
        continue
    for m in REFERENCE.finditer(text):
        name = "README.md" if m.group(1) == "README" else m.group(1)
        candidates = [name, os.path.normpath(os.path.join(os.path.dirname(path), name))]
        target = next((c for c in candidates if c in texts and texts[c] is not None), None)
        if target is None:
            if name.startswith("docs/") or name == "README.md":
                report(path, text.count("\n", 0, m.start()) + 1, f"reference to {name}: no such file")
            continue
        if not (target == "README.md" or (target.startswith("docs/") and target.count("/") == 1)):
            continue
        wanted = normal(re.sub(r"\n[ \t]*(?:#|//|\*|;|--)?[ \t]*", " ", m.group(2)))
        if wanted == PLACEHOLDER:
            continue
        if target not in heading_cache:
            heading_cache[target] = {normal(h) for h in headings(texts[target])}
        if wanted not in heading_cache[target]:
            report(path, text.count("\n", 0, m.start()) + 1,
                   f"reference to {target} \"{wanted}\": {target} has no such heading")

# (c) Internal issue numbers.
ISSUE = re.compile(r"(?<![\w&/])(?<!\]\()#[0-9]{1,5}\b|\bissues?\s+#?[0-9]+\b", re.IGNORECASE)
for path in docs:
    for number, line in enumerate((texts[path] or "").split("\n"), 1):
        for m in ISSUE.finditer(line):
            report(path, number, f"internal issue number \"{m.group(0)}\": say what it is about instead")


def string_literals(source):
    """(line, text) of each C++ string literal, comments and character literals skipped."""
    i, line, n = 0, 1, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
        elif c == "'" and not (i > 0 and (source[i - 1].isalnum())):  # not a digit separator
            j = i + 1
            while j < n and source[j] != "'":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            raw = re.match(r'R"([^(\s]*)\(', source[i - 1:i + 20]) if i > 0 and source[i - 1] == "R" else None
            if raw:
                end = source.find(")" + raw.group(1) + '"', i)
                end = n if end < 0 else end + len(raw.group(1)) + 2
            else:
                end = i + 1
                while end < n and source[end] not in '"\n':
                    end += 2 if source[end] == "\\" else 1
                end += 1
            yield line, source[i:end]
            line += source.count("\n", i, end)
            i = end
        else:
            if c == "\n":
                line += 1
            i += 1


for path in files:
    if path.startswith("cli/") and path.endswith((".cpp", ".hpp")):
        for number, literal in string_literals(read(path) or ""):
            for m in ISSUE.finditer(literal):
                report(path, number, f"internal issue number \"{m.group(0)}\" in a user-facing string")

for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    print(f"check_docs: FAILED ({len(problems)} problem(s))", file=sys.stderr)
    sys.exit(1)
print("check_docs: every link and section reference resolves; no internal issue numbers")
