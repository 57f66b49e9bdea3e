#!/usr/bin/env bash
# The documentation's links and references, checked (scripts/check_docs.py says what exactly):
# Markdown links and #anchors in README.md, CHANGELOG.md and docs/*.md; quoted section references
# (`docs/operating.md "Install"`) anywhere in the repository; no internal issue numbers in the
# docs or the CLI's strings. Exits 1 naming each file and line. Run by scripts/check_code.sh.
# Usage: scripts/check_docs.sh [ROOT]   (default: this repository)
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/check_docs.py" "$@"
