#!/usr/bin/python3
"""Baseline for bench/compare_bench.cpp: scipy's ks_2samp alone and wasserstein_distance alone on
the same two .npy arrays (and, apart, what np.load of both took). Prints one JSON object (seconds
and statistics)."""
import json
import sys
import time

import numpy as np
import scipy
import scipy.stats

start = time.perf_counter()
original = np.load(sys.argv[1])
rebuilt = np.load(sys.argv[2])
load_s = time.perf_counter() - start
start = time.perf_counter()
ks = scipy.stats.ks_2samp(original, rebuilt).statistic
ks_s = time.perf_counter() - start
start = time.perf_counter()
w1 = scipy.stats.wasserstein_distance(original, rebuilt)
w1_s = time.perf_counter() - start
print(json.dumps({"scipy": scipy.__version__, "load_seconds": load_s, "ks": float(ks), "ks_seconds": ks_s,
                  "wasserstein": float(w1), "wasserstein_seconds": w1_s}))
