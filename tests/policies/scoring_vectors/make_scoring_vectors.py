#!/usr/bin/python3
"""Reference values for tests/policies/scoring_vectors_test.cpp, computed with Debian 12's
scikit-learn, scipy and numpy (policies/scoring.hpp states each metric's definition).

Run: /usr/bin/python3 tests/policies/scoring_vectors/make_scoring_vectors.py \
       > tests/policies/scoring_vectors/scoring_vectors.json

Each case holds the inputs (task, labels, predictions, segment keys, query ids, thresholds, k)
and, for the whole set ("") and every segment ("<key>=<value>"), every metric's value, or null
where reverify must say "not judged"; cases with a second prediction set ("other") also hold the
parity counts, Kendall's tau-b and the top-k overlaps. Every value comes from scikit-learn where
it has the metric (named below); mrr and precision@k, which it lacks, average over every order of
the tied scores by brute force (itertools.permutations), independently of reverify's closed form.
"""
import itertools
import json
import sys
import warnings

import numpy as np
import scipy
import scipy.stats
import sklearn
from sklearn import metrics as skm
from sklearn.preprocessing import label_binarize

warnings.simplefilter("ignore")  # sklearn warns on the degenerate scopes these cases are about

EPS_SUM = 1e-3  # core/scoring_inputs.hpp kProbabilitySumTolerance

CLASSIFICATION = ["accuracy", "balanced_accuracy", "precision", "recall", "f1", "roc_auc",
                  "pr_auc", "log_loss", "brier"]
THRESHOLD_METRICS = ["accuracy", "balanced_accuracy", "precision", "recall", "f1"]


def is_probability(rows):
    rows = np.atleast_2d(rows.T).T if rows.ndim == 1 else rows
    if np.any(rows < 0) or np.any(rows > 1):
        return False
    return rows.shape[1] == 1 or bool(np.all(np.abs(rows.sum(axis=1) - 1) <= EPS_SUM))


def binary_scores(y, s, thresholds):
    out = {}
    both = len(np.unique(y)) == 2
    for t in thresholds:
        suffix = "@" + repr(t) if len(thresholds) > 1 else ""
        d = (s >= t).astype(int)
        tp = int(np.sum((d == 1) & (y == 1)))
        fp = int(np.sum((d == 1) & (y == 0)))
        fn = int(np.sum((d == 0) & (y == 1)))
        out["accuracy" + suffix] = skm.accuracy_score(y, d)
        out["balanced_accuracy" + suffix] = skm.balanced_accuracy_score(y, d)
        out["precision" + suffix] = skm.precision_score(y, d, zero_division=0) if tp + fp else None
        out["recall" + suffix] = skm.recall_score(y, d, zero_division=0) if tp + fn else None
        out["f1" + suffix] = skm.f1_score(y, d, zero_division=0) if 2 * tp + fp + fn else None
    out["roc_auc"] = skm.roc_auc_score(y, s) if both else None
    out["pr_auc"] = skm.average_precision_score(y, s) if both else None
    probability = is_probability(s)
    out["log_loss"] = skm.log_loss(y, s, labels=[0, 1]) if probability else None
    out["brier"] = skm.brier_score_loss(y, s, pos_label=1) if probability else None
    return out


def multiclass_scores(y, p, classes):
    d = np.argmax(p, axis=1)
    present = np.unique(y)
    out = {
        "accuracy": skm.accuracy_score(y, d),
        "balanced_accuracy": skm.balanced_accuracy_score(y, d),
        "precision": skm.precision_score(y, d, labels=present, average="macro", zero_division=0),
        "recall": skm.recall_score(y, d, labels=present, average="macro", zero_division=0),
        "f1": skm.f1_score(y, d, labels=present, average="macro", zero_division=0),
    }
    defined = [c for c in range(classes) if 0 < np.sum(y == c) < len(y)]
    if not defined:
        out["roc_auc"] = out["pr_auc"] = None
    elif len(present) == classes and np.allclose(1, p.sum(axis=1)):
        # every class present: scikit-learn's own one-vs-rest macro averages
        out["roc_auc"] = skm.roc_auc_score(y, p, multi_class="ovr", average="macro")
        out["pr_auc"] = skm.average_precision_score(
            label_binarize(y, classes=list(range(classes))), p, average="macro")
    else:
        out["roc_auc"] = float(np.mean([skm.roc_auc_score(y == c, p[:, c]) for c in defined]))
        out["pr_auc"] = float(
            np.mean([skm.average_precision_score(y == c, p[:, c]) for c in defined]))
    probability = is_probability(p)
    out["log_loss"] = skm.log_loss(y, p, labels=list(range(classes))) if probability else None
    onehot = np.eye(classes)[y]
    out["brier"] = float(np.mean(np.sum((p - onehot) ** 2, axis=1))) if probability else None
    return out


def regression_scores(y, s):
    return {
        "rmse": skm.mean_squared_error(y, s, squared=False),
        "mae": skm.mean_absolute_error(y, s),
        "r2": skm.r2_score(y, s) if np.ptp(y) > 0 else None,
    }


def tie_orders(s, members):
    """Every order of `members` (indices) by score descending, ties in every order."""
    groups = []
    for value in sorted(set(s[members]), reverse=True):
        groups.append([i for i in members if s[i] == value])
    assert all(len(g) <= 7 for g in groups), "tie groups too large to enumerate"
    for parts in itertools.product(*[itertools.permutations(g) for g in groups]):
        yield [i for part in parts for i in part]


def ranking_scores(y, s, queries, k):
    ndcg, rr, relevant_top, slots = [], [], 0.0, 0
    for q in sorted(set(queries)):
        members = [i for i in range(len(y)) if queries[i] == q]
        if len(members) < 2 or not np.any(y[members] > 0):
            continue
        ndcg.append(skm.ndcg_score([y[members]], [s[members]], k=k))
        cut = min(k, len(members))
        orders = list(tie_orders(s, members))
        rr.append(np.mean([1 / (next(r for r, i in enumerate(o) if y[i] > 0) + 1) for o in orders]))
        relevant_top += np.mean([sum(y[i] > 0 for i in o[:cut]) for o in orders])
        slots += cut
    if not ndcg:
        return {"ndcg@k": None, "mrr": None, "precision@k": None}
    return {"ndcg@k": float(np.mean(ndcg)), "mrr": float(np.mean(rr)),
            "precision@k": relevant_top / slots}


def top_k(s, members, k):
    order = sorted(members, key=lambda i: (-s[i], i))
    return set(order[:min(k, len(members))])


def ranking_parity(s, o, members_of_queries, k):
    rows, overlaps, taus, changed = [], [], [], 0
    for q, members in members_of_queries:
        if len(members) < 2:
            continue
        a, b = top_k(s, members, k), top_k(o, members, k)
        overlap = len(a & b) / len(a)
        tau = scipy.stats.kendalltau(s[members], o[members]).statistic
        tau = None if np.isnan(tau) else float(tau)
        rows.append({"query": q, "records": len(members), "overlap": overlap,
                     "top_k_changed": overlap < 1, "tau": tau})
        overlaps.append(overlap)
        changed += overlap < 1
        if tau is not None:
            taus.append(tau)
    summary = {"queries": len(rows), "top_k_changed": changed,
               "mean_overlap": float(np.mean(overlaps)) if overlaps else None,
               "tau_queries": len(taus), "mean_tau": float(np.mean(taus)) if taus else None}
    return summary, rows


def parity(case, y, p, o, members):
    task = case["task"]
    if task in ("binary", "regression"):
        a = p[:, 1] if p.ndim == 2 else p
        b = o[:, 1] if o.ndim == 2 else o
        out = []
        for t in case["thresholds"]:
            before, after = a[members] >= t, b[members] >= t
            moved = before != after
            c = {"threshold": t, "changed": int(moved.sum()),
                 "became_positive": int((moved & after).sum()),
                 "became_negative": int((moved & ~after).sum())}
            if task == "binary":
                truth = y[members] == 1
                c["became_correct"] = int((moved & (after == truth)).sum())
                c["became_wrong"] = int((moved & (before == truth)).sum())
            out.append(c)
        return {"crossings": out}
    if task == "multiclass":
        a, b, truth = np.argmax(p[members], axis=1), np.argmax(o[members], axis=1), y[members]
        shifts = [{"class": c, "release": int((a == c).sum()), "other": int((b == c).sum()),
                   "left": int(((a == c) & (b != c)).sum()),
                   "entered": int(((a != c) & (b == c)).sum()),
                   "became_correct": int(((truth == c) & (a != c) & (b == c)).sum()),
                   "became_wrong": int(((truth == c) & (a == c) & (b != c)).sum())}
                  for c in range(case["classes"])]
        return {"argmax_changed": int((a != b).sum()), "classes": shifts}
    queries = case["queries"]
    groups = [(q, [i for i in members if queries[i] == q]) for q in sorted(set(queries))]
    groups = [(q, m) for q, m in groups if m]
    summary, _ = ranking_parity(p, o, groups, case["k"])
    return {"ranking": summary}


def scopes(case):
    n = len(case["labels"])
    yield "", list(range(n))
    for key in case.get("segments", []):
        for value in sorted(set(key["values"])):
            yield key["name"] + "=" + value, [i for i in range(n) if key["values"][i] == value]


def finish(case):
    y = np.asarray(case["labels"])
    p = np.asarray(case["predictions"], dtype=np.float64)
    task = case["task"]
    case["scores"] = {}
    for name, members in scopes(case):
        ys = y[members]
        if task == "binary":
            s = p[:, 1] if p.ndim == 2 else p
            value = binary_scores(ys.astype(int), s[members], case["thresholds"])
        elif task == "multiclass":
            value = multiclass_scores(ys.astype(int), p[members], case["classes"])
        elif task == "regression":
            value = regression_scores(ys, p[members])
        else:
            qs = [case["queries"][i] for i in members]
            value = ranking_scores(ys, p[members], qs, case["k"])
        case["scores"][name] = {k: (None if v is None else float(v)) for k, v in value.items()}
    if "other" in case:
        o = np.asarray(case["other"], dtype=np.float64)
        case["parity"] = {name: parity(case, y, p, o, members) for name, members in scopes(case)}
        if task == "ranking":
            queries = case["queries"]
            groups = [(q, [i for i in range(len(y)) if queries[i] == q])
                      for q in sorted(set(queries))]
            _, case["query_parity"] = ranking_parity(p, o, groups, case["k"])
    return case


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def keys(rng, n, names):
    return [str(v) for v in rng.choice(names, size=n)]


def main():
    rng = np.random.default_rng(20261201)
    cases = []

    def add(**case):
        for field in ("predictions", "other", "labels"):
            if field in case:
                case[field] = np.asarray(case[field]).tolist()
        cases.append(finish(case))

    # binary
    n = 300
    y = rng.integers(0, 2, size=n)
    s = np.clip(0.5 * y + rng.normal(0.25, 0.25, size=n), 0, 1)
    grp = keys(rng, n, ["a", "b", "c"])
    # a segment of one record, one of one class, one whose predictions are all equal
    grp[7] = "single"
    for i in np.flatnonzero(y == 1)[:12]:
        grp[i] = "positives_only"
    flat = np.flatnonzero(y == 0)[12:24].tolist() + np.flatnonzero(y == 1)[12:20].tolist()
    for i in flat:
        grp[i] = "flat"
        s[i] = 0.4
    add(name="binary_segments", task="binary", thresholds=[0.5], labels=y, predictions=s,
        segments=[{"name": "grp", "values": grp}],
        other=np.clip(s + rng.normal(0, 0.08, size=n), 0, 1))
    ties = np.round(s, 1)
    add(name="binary_tied_scores_three_thresholds", task="binary", thresholds=[0.5, 0.3, 0.75],
        labels=y, predictions=ties, segments=[{"name": "grp", "values": grp}],
        other=np.round(np.clip(s + rng.normal(0, 0.1, size=n), 0, 1), 1))
    add(name="binary_two_columns", task="binary", thresholds=[0.5], labels=y,
        predictions=np.stack([1 - s, s], axis=1))
    add(name="binary_logits_not_probabilities", task="binary", thresholds=[0.0], labels=y,
        predictions=rng.normal(size=n) + 1.5 * y, segments=[{"name": "grp", "values": grp}])
    add(name="binary_saturated_probabilities", task="binary", thresholds=[0.5],
        labels=[0, 0, 1, 1, 1, 0], predictions=[0.0, 1.0, 1.0, 0.0, 0.7, 0.2])
    add(name="binary_one_class_no_positive_predicted", task="binary", thresholds=[0.5],
        labels=[0, 0, 0, 0], predictions=[0.1, 0.2, 0.3, 0.4])
    add(name="binary_one_record", task="binary", thresholds=[0.5], labels=[1],
        predictions=[0.9])
    add(name="binary_all_predictions_equal", task="binary", thresholds=[0.5],
        labels=[0, 1, 0, 1, 1], predictions=[0.5] * 5)

    # multiclass
    n, classes = 400, 5
    y = rng.integers(0, classes, size=n)
    logits = rng.normal(size=(n, classes)) + 1.5 * np.eye(classes)[y]
    p = softmax(logits)
    digit = [str(v) for v in y]
    region = keys(rng, n, ["north", "south"])
    region[11] = "lone"
    add(name="multiclass_segments_by_label_and_region", task="multiclass", classes=classes,
        labels=y, predictions=p,
        segments=[{"name": "digit", "values": digit}, {"name": "region", "values": region}],
        other=softmax(logits + rng.normal(0, 0.7, size=(n, classes))))
    absent = np.where(y == 3, 4, y)  # class 3 absent from the labels
    add(name="multiclass_absent_class", task="multiclass", classes=classes, labels=absent,
        predictions=p, segments=[{"name": "region", "values": region}])
    add(name="multiclass_argmax_ties", task="multiclass", classes=3, labels=[0, 1, 2, 1, 0, 2],
        predictions=[[0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3], [0.2, 0.4, 0.4], [0.5, 0.5, 0.0],
                     [0.1, 0.45, 0.45], [0.3, 0.3, 0.4]],
        other=[[0.4, 0.2, 0.4], [0.2, 0.4, 0.4], [0.2, 0.4, 0.4], [0.5, 0.5, 0.0],
               [0.45, 0.45, 0.1], [0.3, 0.4, 0.3]])
    add(name="multiclass_rows_not_summing_to_one", task="multiclass", classes=3,
        labels=[0, 1, 2, 1], predictions=[[0.7, 0.2, 0.1], [0.2, 0.9, 0.1], [0.1, 0.1, 0.8],
                                          [0.3, 0.6, 0.1]],
        segments=[{"name": "half", "values": ["x", "x", "y", "y"]}])
    add(name="multiclass_float32_sums", task="multiclass", classes=classes, labels=y[:50],
        predictions=p[:50].astype(np.float32).astype(np.float64))

    # regression
    n = 250
    y = rng.normal(10, 3, size=n)
    pred = y + rng.normal(0, 1, size=n)
    band = keys(rng, n, ["low", "mid", "high"])
    const = np.flatnonzero(np.array(band) == "low")[:6]
    for i in const:
        band[i] = "constant"
        y[i] = 7.25
    band[3] = "single"
    add(name="regression_segments", task="regression", thresholds=[10.0], labels=y,
        predictions=pred, segments=[{"name": "band", "values": band}],
        other=pred + rng.normal(0, 0.5, size=n))

    # ranking
    n_queries, rows = 30, []
    for q in range(n_queries):
        size = 1 if q % 10 == 0 else int(rng.integers(2, 14))
        for _ in range(size):
            rows.append(q)
    n = len(rows)
    queries = [f"q{q:02d}" for q in rows]
    grades = rng.integers(0, 4, size=n).astype(float) * (rng.uniform(size=n) < 0.5)
    for q in (3, 17):  # queries without a relevant record
        grades[np.array(rows) == q] = 0
    scores = np.round(grades * 0.3 + rng.normal(0, 0.4, size=n), 1)  # ties
    kind = ["head" if r % 3 else "tail" for r in rows]
    add(name="ranking_k5", task="ranking", k=5, labels=grades, predictions=scores,
        queries=queries, segments=[{"name": "kind", "values": kind}],
        other=np.round(scores + rng.normal(0, 0.3, size=n), 1))
    add(name="ranking_k1_no_ties", task="ranking", k=1, labels=grades,
        predictions=grades + rng.normal(0, 1, size=n), queries=queries)
    add(name="ranking_constant_scores", task="ranking", k=3, labels=[0, 2, 1, 0, 0, 3],
        predictions=[0.5] * 6, queries=["a", "a", "a", "b", "b", "b"],
        other=[0.1, 0.2, 0.3, 0.3, 0.2, 0.1])
    add(name="ranking_nothing_judged", task="ranking", k=3, labels=[1, 0, 0],
        predictions=[0.3, 0.2, 0.1], queries=["a", "b", "b"])

    json.dump({"generator": "scikit-learn " + sklearn.__version__ + ", scipy " +
               scipy.__version__ + ", numpy " + np.__version__, "cases": cases},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
