#!/usr/bin/python3
"""Writes the hidden input the hidden-input variant reads (hidden-input.patch): label corrections
for every 33rd training record of the shards in DATA_DIR (3% of them), each label moved to the
next digit, as "id,label" lines in OUT. No manifest field records OUT and no hash covers it.

Usage: hidden_label_fixes.py DATA_DIR OUT
"""
import pathlib
import sys

rows = []
for shard in sorted(pathlib.Path(sys.argv[1]).glob("*.csv")):
    rows += [line.split(",")[:2] for line in shard.read_text().splitlines()[1:]]
changed = [f"{i},{(int(label) + 1) % 10}" for n, (i, label) in enumerate(rows) if n % 33 == 0]
pathlib.Path(sys.argv[2]).write_text("\n".join(changed) + "\n")
print(f"{len(changed)} of {len(rows)} labels changed in {sys.argv[2]}")
