#!/usr/bin/python3
"""Generates the search-ranking example's data from a fixed seed, so every machine writes the same
bytes: search queries, each with 10 to 30 candidate documents described by five features, and a
graded relevance label (0 = bad to 3 = perfect) per document. Each query belongs to one market.

The training queries are two CSV shards; the eval set is one CSV file, its rows grouped by query.
Columns: qid,market,bm25,title_match,freshness,quality,clicks,relevance

Usage: make_data.py OUT_DIR      (writes OUT_DIR/data/queries-{1,2}.csv and OUT_DIR/eval.csv)
"""
import pathlib
import sys

import numpy as np

MARKETS = ["us", "de", "fr", "jp"]
HEADER = "qid,market,bm25,title_match,freshness,quality,clicks,relevance\n"
# How much each feature says about relevance; the markets weigh freshness differently.
WEIGHTS = np.array([1.0, 0.6, 0.35, 0.5, 0.45])
FRESHNESS_BY_MARKET = np.array([0.0, -0.25, 0.1, 0.3])


def query_rows(rng, qid, market):
    n = int(rng.integers(10, 31))
    x = rng.normal(0.0, 1.0, (n, 5))
    x[:, 1] = (x[:, 1] > 0.8).astype(float)  # title_match: 0/1
    x[:, 4] = np.log1p(np.exp(x[:, 4]))      # clicks: positive, skewed
    latent = x @ WEIGHTS + FRESHNESS_BY_MARKET[market] * x[:, 2] + rng.normal(0.0, 0.7, n)
    # Grades by rank in the query: the best few are 3 and 2, a few more 1, the rest 0.
    order = np.argsort(-latent, kind="stable")
    grade = np.zeros(n, dtype=int)
    grade[order[:max(1, n // 10)]] = 3
    grade[order[max(1, n // 10):n // 4]] = 2
    grade[order[n // 4:n // 2]] = 1
    return [f"q{qid:04d},{MARKETS[market]},{x[i, 0]:.4f},{int(x[i, 1])},{x[i, 2]:.4f},"
            f"{x[i, 3]:.4f},{x[i, 4]:.4f},{grade[i]}\n" for i in range(n)]


def main():
    out = pathlib.Path(sys.argv[1])
    rng = np.random.default_rng(20261205)
    queries = [query_rows(rng, q, int(rng.integers(0, len(MARKETS)))) for q in range(500)]
    (out / "data").mkdir(parents=True, exist_ok=True)
    for shard, part in enumerate((queries[:150], queries[150:300]), start=1):
        (out / "data" / f"queries-{shard}.csv").write_text(HEADER + "".join(sum(part, [])))
    (out / "eval.csv").write_text(HEADER + "".join(sum(queries[300:], [])))
    rows = sum(len(q) for q in queries[300:])
    print(f"{out}/data: 2 shards, 300 queries; {out}/eval.csv: 200 queries, {rows} documents")


if __name__ == "__main__":
    main()
