#!/usr/bin/env bash
# Independent reference for a folder's file manifest, with coreutils only: prints the manifest lines
# ("<sha256>  <size>  <relative path>", sorted bytewise) and then the root hash on the last line.
# Usage: hash_coreutils.sh FOLDER SCRATCH_FILE (the lines are kept there to be hashed).
# For test folders whose names hold no newline or backslash (sha256sum escapes those).
set -euo pipefail
cd "$1"
export LC_ALL=C
find -L . -type f -printf '%P\n' | sort | while IFS= read -r file; do
  printf '%s  %s  %s\n' "$(sha256sum -- "$file" | cut -c1-64)" "$(stat -L -c %s -- "$file")" "$file"
done >"$2"
cat "$2"
sha256sum <"$2" | cut -c1-64
