#!/usr/bin/python3
"""Reference vectors for tests/policies/vectors_test.cpp, computed with Debian's scipy and numpy.

Run: /usr/bin/python3 tests/policies/vectors/make_vectors.py > tests/policies/vectors/vectors.json
Each case holds both prediction arrays (original, rebuilt) and the statistics reverify must match:
ks (scipy.stats.ks_2samp(...).statistic), wasserstein (scipy.stats.wasserstein_distance),
quantiles (numpy.quantile, default linear method), psi (the numpy definition below) and, when
both arrays have the same shape, the paired statistics.
"""
import json
import sys

import numpy as np
import scipy
import scipy.stats

LEVELS = [0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99]
PSI_SMOOTHING = 0.5  # counts added to every bin before the log (policies/stats.hpp)
THRESHOLD = 0.5


def psi(reference, observed):
    pooled = np.sort(np.concatenate([reference, observed]))
    total = len(pooled)
    edges = np.unique(pooled[[j * total // 10 for j in range(1, 10)]])
    edges = edges[edges > pooled[0]]
    bins = len(edges) + 1
    def shares(x):
        counts = np.bincount(np.searchsorted(edges, x, side="right"), minlength=bins)
        return (counts + PSI_SMOOTHING) / (len(x) + PSI_SMOOTHING * bins)
    p, q = shares(reference), shares(observed)
    return float(np.sum((q - p) * np.log(q / p)))


def case(name, original, rebuilt):
    original = np.asarray(original, dtype=np.float64)
    rebuilt = np.asarray(rebuilt, dtype=np.float64)
    a, b = original.ravel(), rebuilt.ravel()
    out = {
        "name": name,
        "original": original.tolist(),
        "rebuilt": rebuilt.tolist(),
        "ks": float(scipy.stats.ks_2samp(a, b).statistic),
        "wasserstein": float(scipy.stats.wasserstein_distance(a, b)),
        "psi": psi(a, b),
        "quantiles_original": np.quantile(a, LEVELS).tolist(),
        "quantiles_rebuilt": np.quantile(b, LEVELS).tolist(),
    }
    if original.shape == rebuilt.shape:
        d = np.abs(original - rebuilt)
        if original.ndim == 2:
            flips = np.argmax(original, axis=1) != np.argmax(rebuilt, axis=1)
        else:
            flips = (original >= THRESHOLD) != (rebuilt >= THRESHOLD)
        out["paired"] = {"max_abs_diff": float(d.max()), "mean_abs_diff": float(d.mean()),
                         "flip_rate": float(flips.mean())}
    return out


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    rng = np.random.default_rng(20261129)
    normal = rng.normal(size=300)
    cases = [
        case("normal_same_size", normal, normal + rng.normal(scale=0.01, size=300)),
        case("normal_shifted", rng.normal(size=200), rng.normal(loc=0.3, size=200)),
        case("normal_scaled", rng.normal(size=250), rng.normal(scale=1.5, size=250)),
        case("identical", normal, normal.copy()),
        case("probabilities_beta", rng.beta(2, 5, size=400), rng.beta(2.2, 5, size=400)),
        case("ties_rounded", np.round(rng.normal(size=300), 1), np.round(rng.normal(size=300), 1)),
        case("heavy_duplicates", rng.integers(0, 3, size=500).astype(float),
             rng.integers(0, 4, size=500).astype(float)),
        case("all_equal_vs_spread", np.full(50, 0.5), rng.uniform(size=50)),
        case("constant_both", np.full(40, 1.0), np.full(40, 1.0)),
        case("n1_vs_n1", [0.3], [0.7]),
        case("n1_vs_many", [0.5], rng.uniform(size=100)),
        case("many_vs_n1", rng.uniform(size=100), [0.25]),
        case("very_unequal_sizes", rng.normal(size=1000), rng.normal(loc=0.1, size=7)),
        case("unequal_sizes_ties", np.round(rng.uniform(size=333), 2), np.round(rng.uniform(size=29), 2)),
        case("disjoint_supports", rng.uniform(0, 1, size=60), rng.uniform(2, 3, size=80)),
        case("negative_and_zero", np.concatenate([[-0.0, 0.0], -rng.exponential(size=98)]),
             np.concatenate([[0.0], -rng.exponential(scale=1.2, size=99)])),
        case("wide_range", rng.lognormal(sigma=4, size=200), rng.lognormal(sigma=4.1, size=200)),
        case("scores_2d_softmax", softmax(rng.normal(size=(120, 10))), softmax(rng.normal(size=(120, 10)))),
        case("scores_2d_close", softmax(np.tile(rng.normal(size=(1, 4)), (80, 1)) + rng.normal(size=(80, 4))),
             softmax(np.tile(rng.normal(size=(1, 4)), (80, 1)) + rng.normal(size=(80, 4)))),
        case("scores_2d_argmax_ties", np.tile([0.5, 0.5, 0.0], (30, 1)), np.tile([0.25, 0.5, 0.25], (30, 1))),
        case("scores_2d_one_column", rng.uniform(size=(64, 1)), rng.uniform(size=(64, 1))),
        case("threshold_boundary", [0.5, 0.49999999, 0.5000001, 0.1, 0.9], [0.49999999, 0.5, 0.5, 0.1, 0.9]),
        case("sparse_bins", np.concatenate([np.zeros(90), rng.uniform(size=10)]), rng.uniform(size=100)),
        case("float32_values", rng.normal(size=150).astype(np.float32), rng.normal(size=150).astype(np.float32)),
    ]
    json.dump({"generator": "scipy " + scipy.__version__ + ", numpy " + np.__version__,
               "psi_smoothing": PSI_SMOOTHING, "threshold": THRESHOLD, "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
