#!/usr/bin/python3
"""Copies the UCI optical digits data set into examples/digits/ as a sharded training snapshot
and a separate evaluation set (run once; its output is committed).

Source: Debian's python3-sklearn copy, sklearn/datasets/data/digits.csv.gz (1,797 8x8 images,
64 pixel values 0..16 and the label in the last column). See examples/digits/DATA-LICENSE.md.

Each row gets a stable id, "optdigits-NNNN" (its row number in the source). Rows with
sha256(id + "eval-v1") % 100 < 20 form the evaluation set, in id order; the others are cut into
8 shards of consecutive ids, so that "one data file changed" is a meaningful event.
"""
import gzip
import hashlib
import pathlib
import sys

SOURCE = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz")
EVAL_SALT = "eval-v1"
SHARDS = 8


def bucket(record_id: str, salt: str) -> int:
    return int(hashlib.sha256((record_id + salt).encode()).hexdigest(), 16) % 100


def main() -> int:
    here = pathlib.Path(__file__).resolve().parent
    rows = gzip.decompress(SOURCE.read_bytes()).decode().splitlines()
    header = "id,label," + ",".join(f"p{i}" for i in range(64)) + "\n"
    train, evaluation = [], []
    for n, line in enumerate(rows):
        values = line.split(",")
        assert len(values) == 65, f"row {n}: expected 65 values"
        record_id = f"optdigits-{n:04d}"
        out = f"{record_id},{values[64]}," + ",".join(values[:64]) + "\n"
        (evaluation if bucket(record_id, EVAL_SALT) < 20 else train).append(out)
    data_dir, eval_dir = here / "data", here / "eval"
    data_dir.mkdir(exist_ok=True)
    eval_dir.mkdir(exist_ok=True)
    per_shard = -(-len(train) // SHARDS)
    for s in range(SHARDS):
        chunk = train[s * per_shard:(s + 1) * per_shard]
        (data_dir / f"shard-{s:02d}.csv").write_text(header + "".join(chunk))
    (eval_dir / "digits-eval.csv").write_text(header + "".join(evaluation))
    print(f"{len(train)} training rows in {SHARDS} shards, {len(evaluation)} evaluation rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
