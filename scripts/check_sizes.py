#!/usr/bin/python3
"""What the size rule asks of product code (docs/design.md "Code conventions"): no file of a
layer over 800 lines, no function over 80 lines unless the comment above it says why it must be
"one piece". Functions are found as clang-format leaves them in a .cpp file: a definition starts at
column 0 and its body ends at the next line that is "}" alone (lambdas and class members are
indented and count towards the function around them). Prints each offender as file:line and
exits 1 when there is one."""
import re
import subprocess
import sys

LAYERS = ("core", "policies", "attest", "runners", "pager", "settings", "store", "verify", "api",
          "cli", "daemon")
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
NOT_A_FUNCTION = re.compile(r"(namespace|class|struct|enum|union|extern|template\s*<[^>]*>\s*$|}|#|//)")


def product_files(suffixes):
    names = subprocess.run(["git", "ls-files", *[f"{layer}/*" for layer in LAYERS]],
                           capture_output=True, text=True, check=True).stdout.split()
    return [name for name in names if name.endswith(suffixes)]


def long_functions(path, lines):
    i = 0
    while i < len(lines):
        line = lines[i]
        opens_body = line.rstrip().endswith("{") and "=" not in line.split("(")[0]
        if line and not line[0].isspace() and opens_body and not NOT_A_FUNCTION.match(line):
            start = i  # back over the earlier lines of a signature split by clang-format
            while start > 0 and lines[start - 1].strip() and \
                    not lines[start - 1].startswith(("}", "//", "#")) and \
                    not lines[start - 1].rstrip().endswith((";", "{", "}")):
                start -= 1
            end = i + 1
            while end < len(lines) and lines[end] not in ("}", "};"):
                end += 1
            length = end - start + 1
            comment = []
            above = start - 1
            while above >= 0 and lines[above].startswith("//"):
                comment.append(lines[above])
                above -= 1
            if length > MAX_FUNCTION_LINES and "one piece" not in " ".join(comment):
                yield start + 1, length, lines[start].strip()
            i = end
        i += 1


def main():
    failed = False
    for path in product_files((".cpp", ".hpp")):
        lines = open(path, encoding="utf-8").read().split("\n")
        if len(lines) - 1 > MAX_FILE_LINES:
            print(f"{path}: {len(lines) - 1} lines, over {MAX_FILE_LINES}: split it by concern",
                  file=sys.stderr)
            failed = True
        if path.endswith(".cpp"):
            for line, length, signature in long_functions(path, lines):
                print(f"{path}:{line}: a function of {length} lines, over {MAX_FUNCTION_LINES} "
                      f"(split it, or say in its comment why it must be one piece): {signature[:80]}",
                      file=sys.stderr)
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
