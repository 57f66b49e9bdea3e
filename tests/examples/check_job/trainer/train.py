#!/usr/bin/python3
"""A small trainer that follows the rebuild contract through the job kit, the base of check-job's
planted defects (../defects/*.patch, each one silent failure of the field notes): softmax
regression on the digits example's shards, mini-batch SGD, with noise augmentation drawn in two
worker processes, each from a generator seeded from the contract's "augmentation" seed and its
shard of the records.
"""
import multiprocessing
import pathlib
import sys

import numpy as np

import reverify_job

CONFIG = {"steps": 60, "batch_size": 32, "learning_rate": 0.5, "noise": 0.05}
SEEDS = {"numpy": 1, "dataloader": 2, "augmentation": 3}


def read(path):
    """(ids, labels, pixels) of a CSV file with columns id,label,p0..p63."""
    _, rows, keys = reverify_job.read_csv(path, key_column="id")
    labels = np.array([int(r[1]) for r in rows])
    return keys, labels, np.array([[float(v) for v in r[2:]] for r in rows]) / 16.0


def read_snapshot(folder):
    parts = [read(p) for p in sorted(pathlib.Path(folder).glob("*.csv"))]
    return (sum((p[0] for p in parts), []), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def augment(task):
    """Runs in a worker: noise for one shard of the records."""
    seed, shard, pixels, noise = task
    rng = np.random.default_rng([seed, shard])
    return pixels + rng.normal(0.0, noise, pixels.shape)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def accuracy(scores, labels):
    return float(np.mean(np.argmax(scores, axis=1) == labels))


def main():
    job = reverify_job.Job(CONFIG, SEEDS)
    job.setup()
    config = job.config
    keys, y, x = read_snapshot(job.data)
    keep = np.array(job.subsample_mask(keys, key="the shards' id column"))
    x, y = x[keep], y[keep]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        shards = pool.map(augment, [(job.seed("augmentation"), w, x[w::2], config["noise"])
                                    for w in range(2)])
    x[0::2], x[1::2] = shards
    weights = {"w": job.numpy_rng("numpy").normal(0.0, 0.01, (64, 10)), "b": np.zeros(10)}
    order_rng = job.numpy_rng("dataloader")
    order, cursor = order_rng.permutation(len(x)), 0
    onehot = np.eye(10)[y]
    for _ in range(job.steps(config["steps"])):
        if cursor + config["batch_size"] > len(order):
            order, cursor = order_rng.permutation(len(x)), 0
        batch = order[cursor:cursor + config["batch_size"]]
        cursor += config["batch_size"]
        p = softmax(x[batch] @ weights["w"] + weights["b"])
        job.record_loss(-np.mean(np.sum(onehot[batch] * np.log(p + 1e-12), axis=1)))
        grad = (p - onehot[batch]) / len(batch)
        weights["w"] -= config["learning_rate"] * x[batch].T @ grad
        weights["b"] -= config["learning_rate"] * grad.sum(axis=0)
    _, y_eval, x_eval = read(job.eval)
    scores = softmax(x_eval @ weights["w"] + weights["b"])
    job.write_outputs(primary=("accuracy", accuracy(scores, y_eval)), examples=len(y_eval),
                      predictions=scores, weights=weights)
    return 0


if __name__ == "__main__":
    sys.exit(main())
