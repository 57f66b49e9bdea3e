#!/usr/bin/python3
"""Baseline for bench/scoring_bench.cpp: scikit-learn computing the same full metric set of one
task over the whole eval set and every segment, on the same arrays (.npy files the benchmark
wrote). Loading is not timed. Prints one JSON object: the seconds (wall, and CPU time of the
process: the machine may be shared) and the whole set's values.

Usage: scoring_bench.py TASK DIR    (DIR holds labels.npy, predictions.npy, segments.npy)
"""
import json
import sys
import time
import warnings

import numpy as np
import sklearn
from sklearn import metrics as skm
from sklearn.preprocessing import label_binarize

warnings.simplefilter("ignore")


def binary(y, s):
    d = (s >= 0.5).astype(int)
    return {
        "accuracy": skm.accuracy_score(y, d),
        "balanced_accuracy": skm.balanced_accuracy_score(y, d),
        "precision": skm.precision_score(y, d),
        "recall": skm.recall_score(y, d),
        "f1": skm.f1_score(y, d),
        "roc_auc": skm.roc_auc_score(y, s),
        "pr_auc": skm.average_precision_score(y, s),
        "log_loss": skm.log_loss(y, s, labels=[0, 1]),
        "brier": skm.brier_score_loss(y, s, pos_label=1),
    }


def multiclass(y, p):
    classes = p.shape[1]
    d = np.argmax(p, axis=1)
    present = np.unique(y)
    return {
        "accuracy": skm.accuracy_score(y, d),
        "balanced_accuracy": skm.balanced_accuracy_score(y, d),
        "precision": skm.precision_score(y, d, labels=present, average="macro", zero_division=0),
        "recall": skm.recall_score(y, d, labels=present, average="macro", zero_division=0),
        "f1": skm.f1_score(y, d, labels=present, average="macro", zero_division=0),
        "roc_auc": skm.roc_auc_score(y, p, multi_class="ovr", average="macro"),
        "pr_auc": skm.average_precision_score(label_binarize(y, classes=list(range(classes))), p,
                                              average="macro"),
        "log_loss": skm.log_loss(y, p, labels=list(range(classes))),
        "brier": float(np.mean(np.sum((p - np.eye(classes)[y]) ** 2, axis=1))),
    }


def regression(y, s):
    return {"rmse": skm.mean_squared_error(y, s, squared=False),
            "mae": skm.mean_absolute_error(y, s), "r2": skm.r2_score(y, s)}


def main():
    task, folder = sys.argv[1], sys.argv[2]
    labels = np.load(folder + "/labels.npy")
    predictions = np.load(folder + "/predictions.npy")
    segments = np.load(folder + "/segments.npy").astype(np.int64)
    score = {"binary": binary, "multiclass": multiclass, "regression": regression}[task]
    y = labels if task == "regression" else labels.astype(np.int64)
    start, start_cpu = time.perf_counter(), time.process_time()
    overall = score(y, predictions)
    for value in np.unique(segments):
        mask = segments == value
        score(y[mask], predictions[mask])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    print(json.dumps({"sklearn": sklearn.__version__, "seconds": seconds, "cpu_seconds": cpu_seconds,
                      "overall": {k: float(v) for k, v in overall.items()}}))


if __name__ == "__main__":
    main()
