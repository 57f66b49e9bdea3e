#!/usr/bin/python3
"""search-ranking-pairwise: which documents to show first for a search query? A linear scorer over
five document features (and freshness per market), trained with a pairwise logistic loss
(RankNet) by mini-batch SGD over queries, following reverify's rebuild contract through the job
kit (reverify_job.py, copied beside this file). numpy only.

A training record is a query with its candidate documents: the query id is its subsample key, so
subsample mode keeps or drops whole queries. The standardisation is fitted on the documents
trained on. The randomness is the initial weights (seed "init") and the query order (seed
"dataloader"). The predictions are one score per eval document, in eval-set order; the job's
metric is NDCG@10 with linear gains, as reverify's scoring computes it.
"""
import pathlib
import sys

import numpy as np

import reverify_job

CONFIG = {"epochs": 4, "queries_per_batch": 10, "learning_rate": 0.2, "l2": 0.0001, "k": 10}
SEEDS = {"dataloader": 2026, "init": 1205}
MARKETS = ["us", "de", "fr", "jp"]


def read(path):
    """(query ids, markets, features, relevance) of one CSV file, one row per document."""
    header, rows, _ = reverify_job.read_csv(path)
    assert header[:2] == ["qid", "market"] and header[-1] == "relevance", header
    qids = np.array([r[0] for r in rows])
    markets = np.array([r[1] for r in rows])
    numeric = np.array([[float(v) for v in r[2:7]] for r in rows])
    return qids, markets, numeric, np.array([int(r[7]) for r in rows])


def features(numeric, markets, mean, scale):
    """The standardised features, and freshness again once per market (its weight differs)."""
    z = (numeric - mean) / scale
    per_market = np.stack([z[:, 2] * (markets == m) for m in MARKETS], axis=1)
    return np.hstack([z, per_market])


def groups(qids):
    """Row indices of each query, in order of first appearance."""
    _, first, inverse = np.unique(qids, return_index=True, return_inverse=True)
    return [np.flatnonzero(inverse == g) for g in np.argsort(first)]


def pairs(rows, relevance):
    """(better, worse) row pairs of one query: every two documents of different grades."""
    better, worse = np.nonzero(relevance[rows][:, None] > relevance[rows][None, :])
    return rows[better], rows[worse]


def ndcg_at(k, scores, relevance):
    """NDCG@k with gain = grade and discount 1/log2(rank + 1) of one query."""
    discount = 1 / np.log2(np.arange(2, k + 2))
    top = relevance[np.argsort(-scores, kind="stable")][:k]
    ideal = np.sort(relevance)[::-1][:k]
    return float(top @ discount[:len(top)] / (ideal @ discount[:len(ideal)]))


def main():
    job = reverify_job.Job(CONFIG, SEEDS)
    job.setup()
    config = job.config
    parts = [read(shard) for shard in sorted(pathlib.Path(job.data).glob("*.csv"))]
    qids, markets, numeric, relevance = (np.concatenate(c) for c in zip(*parts))
    queries = groups(qids)
    keep = job.subsample_mask([qids[q[0]] for q in queries], key="the query id (column qid)")
    queries = [q for q, kept in zip(queries, keep) if kept]
    trained = np.concatenate(queries)
    mean, scale = numeric[trained].mean(axis=0), numeric[trained].std(axis=0)
    x = features(numeric, markets, mean, scale)
    query_pairs = [pairs(q, relevance) for q in queries]

    w = job.numpy_rng("init").normal(0.0, 0.01, x.shape[1])
    order_rng = job.numpy_rng("dataloader")
    batch = config["queries_per_batch"]
    batches_per_epoch = len(queries) // batch
    total = config["epochs"] * batches_per_epoch  # the schedule's length, in every mode
    steps = job.epoch_steps(config["epochs"], batches_per_epoch)
    order = None
    for step in range(steps):
        if step % batches_per_epoch == 0:
            order = order_rng.permutation(len(queries))
        chosen = order[(step % batches_per_epoch) * batch:][:batch]
        better = np.concatenate([query_pairs[q][0] for q in chosen])
        worse = np.concatenate([query_pairs[q][1] for q in chosen])
        diff = x[better] - x[worse]
        margin = diff @ w
        job.record_loss(np.mean(np.logaddexp(0.0, -margin)))
        gradient = -(diff * (1 / (1 + np.exp(margin)))[:, None]).mean(axis=0) + config["l2"] * w
        # The step size falls linearly to a tenth over the whole schedule (steps mode stops
        # early on the same schedule).
        w -= config["learning_rate"] * (1 - 0.9 * step / total) * gradient

    eval_qids, eval_markets, eval_numeric, eval_relevance = read(job.eval)
    scores = (features(eval_numeric, eval_markets, mean, scale) @ w).astype(np.float32)
    k = config["k"]
    per_query = {}
    for rows in groups(eval_qids):
        if len(rows) >= 2 and eval_relevance[rows].max() > 0:
            per_query[eval_qids[rows[0]]] = (eval_markets[rows[0]],
                                             ndcg_at(k, scores[rows], eval_relevance[rows]))
    ndcg = np.mean([v for _, v in per_query.values()])
    segments = {f"market={m}": {f"ndcg@{k}": float(np.mean([v for mk, v in per_query.values()
                                                             if mk == m]))} for m in MARKETS}
    job.write_outputs(primary=(f"ndcg@{k}", ndcg), segments=segments, predictions=scores,
                      weights={"w": w, "scaler.mean": mean, "scaler.scale": scale})
    print(f"trained {steps} steps on {len(queries)} queries: eval ndcg@{k} {ndcg:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
