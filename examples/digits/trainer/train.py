"""digits-mlp: a one-hidden-layer MLP on the UCI optical digits, trained with mini-batch SGD.

Follows reverify's rebuild contract (docs/design.md, "The rebuild contract") through the job kit
(reverify_job.py, copied into this repository):
  REVERIFY_DATA   folder of training shards (*.csv: id,label,p0..p63)
  REVERIFY_EVAL   evaluation set (one csv, same columns), predicted in file order
  REVERIFY_CONFIG resolved config (JSON), REVERIFY_SEEDS seeds (JSON)
  REVERIFY_SEED_OVERRIDE (calibration only) replaces every seed
  REVERIFY_MODE=full|steps|subsample, REVERIFY_MAX_STEPS (steps mode),
  REVERIFY_SUBSAMPLE_FRACTION and REVERIFY_SUBSAMPLE_SALT (subsample mode)
  REVERIFY_OUT    writes result.json, predictions.npy, model.safetensors

Every random draw comes from a generator seeded from the seeds: weights from seeds["numpy"],
batch order from seeds["dataloader"]. The validation split is sha256(id + salt) % 100 < 20.
Subsample mode keeps the training records whose key, the shards' id column, the subsample rule
keeps (the kit's subsample_mask), and trains them for the same number of epochs as the full run
(the kit's steps(): steps * fraction, rounded up).
"""
import hashlib
import pathlib
import sys

import numpy as np

import reverify_job

DEFAULT_CONFIG = {"hidden": 32, "learning_rate": 0.1, "batch_size": 32, "steps": 1500,
                  "split_salt": "s1", "split_percent": 20}
DEFAULT_SEEDS = {"numpy": 42, "dataloader": 123}


def read_csv(path):
    lines = pathlib.Path(path).read_text().splitlines()[1:]
    ids, labels, pixels = [], [], []
    for line in lines:
        fields = line.split(",")
        ids.append(fields[0])
        labels.append(int(fields[1]))
        pixels.append([float(v) for v in fields[2:]])
    return ids, np.array(labels, dtype=np.int64), np.array(pixels, dtype=np.float64) / 16.0


def read_snapshot(folder):
    ids, labels, pixels = [], [], []
    for shard in sorted(pathlib.Path(folder).glob("*.csv")):
        i, y, x = read_csv(shard)
        ids += i
        labels.append(y)
        pixels.append(x)
    return ids, np.concatenate(labels), np.concatenate(pixels)


def in_validation(record_id, salt, percent):
    return int(hashlib.sha256((record_id + salt).encode()).hexdigest(), 16) % 100 < percent


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def forward(params, x):
    h = np.tanh(x @ params["fc1.weight"].T + params["fc1.bias"])
    return h, softmax(h @ params["fc2.weight"].T + params["fc2.bias"])


def train(x, y, config, job, max_steps):
    rng_init = job.numpy_rng("numpy")
    rng_batches = job.numpy_rng("dataloader")
    hidden, classes = config["hidden"], 10
    params = {
        "fc1.weight": rng_init.normal(0, 1 / np.sqrt(x.shape[1]), (hidden, x.shape[1])),
        "fc1.bias": np.zeros(hidden),
        "fc2.weight": rng_init.normal(0, 1 / np.sqrt(hidden), (classes, hidden)),
        "fc2.bias": np.zeros(classes),
    }
    onehot = np.eye(classes)[y]
    order, cursor = rng_batches.permutation(len(x)), 0
    for _ in range(max_steps):
        if cursor + config["batch_size"] > len(order):
            order, cursor = rng_batches.permutation(len(x)), 0
        batch = order[cursor:cursor + config["batch_size"]]
        cursor += config["batch_size"]
        xb, tb = x[batch], onehot[batch]
        h, p = forward(params, xb)
        job.record_loss(-np.mean(np.sum(tb * np.log(p + 1e-12), axis=1)))
        dz2 = (p - tb) / len(batch)
        dh = (dz2 @ params["fc2.weight"]) * (1 - h * h)
        grads = {"fc2.weight": dz2.T @ h, "fc2.bias": dz2.sum(axis=0),
                 "fc1.weight": dh.T @ xb, "fc1.bias": dh.sum(axis=0)}
        for name, g in grads.items():
            params[name] -= config["learning_rate"] * g
    return params


def accuracy(probabilities, labels):
    return float(np.mean(np.argmax(probabilities, axis=1) == labels)) if len(labels) else 0.0


def main():
    job = reverify_job.Job(DEFAULT_CONFIG, DEFAULT_SEEDS)
    job.setup()
    config = job.config
    steps = job.steps(config["steps"])

    ids, y, x = read_snapshot(job.data)
    held_out = np.array([in_validation(i, config["split_salt"], config["split_percent"]) for i in ids])
    training_ids = [i for i, held in zip(ids, held_out) if not held]
    trained = ~held_out
    trained[trained] = job.subsample_mask(training_ids, key="the training shards' id column")
    params = train(x[trained], y[trained], config, job, steps)
    _, y_eval, x_eval = read_csv(job.eval)
    _, p_eval = forward(params, x_eval)
    _, p_val = forward(params, x[held_out])

    segments = {f"digit={d}": {"accuracy": accuracy(p_eval[y_eval == d], y_eval[y_eval == d])}
                for d in range(10)}
    result = job.write_outputs(
        # examples: the metric is a proportion over that many eval records (reverify models its
        # whole-example steps); segment_examples: each segment's count.
        primary=("accuracy", accuracy(p_eval, y_eval)), examples=len(y_eval),
        segments=segments,
        segment_examples={f"digit={d}": int(np.sum(y_eval == d)) for d in range(10)},
        predictions=p_eval, weights=params, weights_dtype="float32",
        extra={"validation": {"accuracy": accuracy(p_val, y[held_out]),
                              "records": int(held_out.sum())}})
    print(f"trained {steps} steps on {int(trained.sum())} records: eval accuracy "
          f"{result['primary']['value']:.4f}, final loss {job.losses[-1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
