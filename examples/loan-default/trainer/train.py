#!/usr/bin/python3
"""loan-default-sgd: will a loan default? A logistic regression (scikit-learn's SGDClassifier,
log loss) on loan applications, trained with mini-batch SGD, following reverify's rebuild contract
through the job kit (reverify_job.py, copied beside this file).

The training records are CSV rows without an id column: a record's key is its content key, the
SHA-256 of its bytes (docs/design.md, "The subsample rule"). The standardisation is fitted on the
records trained on (in subsample mode, the subsample's). The data order is the only randomness,
drawn from seed "dataloader".
"""
import math
import pathlib
import sys

import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import StandardScaler

import reverify_job

CONFIG = {"epochs": 5, "batch_size": 50, "learning_rate": 0.02, "alpha": 0.0001}
SEEDS = {"dataloader": 7}
REGIONS = ["north", "south", "east", "west"]


def features(rows):
    """income (log), debt ratio, age, years employed, and the region one-hot."""
    numeric = np.array([[math.log(float(r[0])), float(r[1]), float(r[2]), float(r[3])]
                        for r in rows])
    regions = np.array([[r[4] == name for name in REGIONS] for r in rows], dtype=float)
    return numeric, regions


def read(path):
    _, rows, keys = reverify_job.read_csv(path)  # no id column: content keys
    return keys, rows, np.array([int(r[5]) for r in rows])


def main():
    job = reverify_job.Job(CONFIG, SEEDS)
    job.setup()
    config = job.config
    keys, rows, labels = [], [], []
    for shard in sorted(pathlib.Path(job.data).glob("*.csv")):
        k, r, y = read(shard)
        keys += k
        rows += r
        labels.append(y)
    labels = np.concatenate(labels)
    keep = job.subsample_mask(keys, key="the record's content key: SHA-256 of its CSV row")
    rows = [r for r, kept in zip(rows, keep) if kept]
    labels = labels[np.array(keep)]
    numeric, regions = features(rows)
    scaler = StandardScaler().fit(numeric)  # fitted on the records trained on
    x = np.hstack([scaler.transform(numeric), regions])

    model = SGDClassifier(loss="log_loss", learning_rate="constant", eta0=config["learning_rate"],
                          alpha=config["alpha"], shuffle=False)
    order_rng = job.numpy_rng("dataloader")
    batches_per_epoch = len(x) // config["batch_size"]
    steps = job.epoch_steps(config["epochs"], batches_per_epoch)
    order = None
    for step in range(steps):
        if step % batches_per_epoch == 0:
            order = order_rng.permutation(len(x))
        batch = order[(step % batches_per_epoch) * config["batch_size"]:][:config["batch_size"]]
        model.partial_fit(x[batch], labels[batch], classes=[0, 1])
        p = np.clip(model.predict_proba(x[batch])[:, 1], 1e-12, 1 - 1e-12)
        job.record_loss(-np.mean(labels[batch] * np.log(p) + (1 - labels[batch]) * np.log(1 - p)))

    _, eval_rows, eval_labels = read(job.eval)
    eval_numeric, eval_regions = features(eval_rows)
    scores = model.predict_proba(np.hstack([scaler.transform(eval_numeric), eval_regions]))[:, 1]
    scores = scores.astype(np.float32)  # as written: the metrics are the predictions'
    correct = (scores >= 0.5) == eval_labels
    region = np.array([r[4] for r in eval_rows])
    segments = {f"region={name}": {"accuracy": float(np.mean(correct[region == name]))}
                for name in REGIONS}
    job.write_outputs(
        primary=("accuracy", float(np.mean(correct))), examples=len(eval_labels),
        segments=segments,
        segment_examples={f"region={name}": int(np.sum(region == name)) for name in REGIONS},
        predictions=scores,
        weights={"coef": model.coef_, "intercept": model.intercept_, "scaler.mean": scaler.mean_,
                 "scaler.scale": scaler.scale_})
    print(f"trained {steps} steps on {len(x)} applications: eval accuracy {np.mean(correct):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
