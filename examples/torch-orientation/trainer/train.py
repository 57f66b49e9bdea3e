#!/usr/bin/python3
"""digit-orientation-cnn: which way up is a scanned handwritten digit? A small CNN that tells
whether an 8x8 digit image was turned by 0, 90, 180 or 270 degrees (orientation detection, the
step that rights scanned forms before reading them), trained with PyTorch on the UCI digits that
examples/digits ships. The digit itself is never a label here: only the turn is.

Follows reverify's rebuild contract through the job kit (reverify_job.py, copied into this
repository as a pipeline copies it):
  REVERIFY_DATA   folder of training shards (*.csv: id,label,p0..p63, pixel values 0..16)
  REVERIFY_EVAL   evaluation set (one csv, same columns): every image at each of the 4 turns, in
                  file order then turn order, is one evaluation record
  REVERIFY_CONFIG resolved config (JSON), REVERIFY_SEEDS seeds (JSON)
  REVERIFY_SEED_OVERRIDE (calibration only) replaces every seed
  REVERIFY_MODE=full|steps|subsample, REVERIFY_MAX_STEPS (steps mode),
  REVERIFY_SUBSAMPLE_FRACTION and REVERIFY_SUBSAMPLE_SALT (subsample mode: the training images
                  whose record id, the shards' id column, the kit's subsample rule keeps)
  REVERIFY_OUT    writes result.json, predictions.npy, model.safetensors

Training batches come from a DataLoader with `dataloader_workers` worker processes, a seeded
generator (shuffle order, worker seeds) and the kit's worker_init_fn. Every training sample is
a random augmentation drawn inside the dataset from the dataset's own numpy Generator: a shift by
up to one pixel, a random number of quarter turns (which is the label), random contrast and
pixel noise. The validation split is sha256(id + salt) % 100 < split_percent; validation accuracy
is reported, not trained on.
"""
import hashlib
import pathlib
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import reverify_job

DEFAULT_CONFIG = {"channels": 16, "hidden": 64, "batch_size": 64, "learning_rate": 0.003,
                  "steps": 800, "split_salt": "o1", "split_percent": 15,
                  "dataloader_workers": 2, "intra_op_threads": 1, "inter_op_threads": 1}
DEFAULT_SEEDS = {"python": 42, "numpy": 42, "framework": 42, "dataloader": 123,
                 "augmentation": 7}
TURNS = 4


def read_csv(path):
    ids, digits, pixels = [], [], []
    for line in pathlib.Path(path).read_text().splitlines()[1:]:
        fields = line.split(",")
        ids.append(fields[0])
        digits.append(int(fields[1]))
        pixels.append([float(v) for v in fields[2:]])
    images = np.array(pixels, dtype=np.float32).reshape(-1, 8, 8) / 16.0
    return ids, np.array(digits, dtype=np.int64), images


def read_snapshot(folder):
    ids, digits, images = [], [], []
    for shard in sorted(pathlib.Path(folder).glob("*.csv")):
        i, d, x = read_csv(shard)
        ids += i
        digits.append(d)
        images.append(x)
    return ids, np.concatenate(digits), np.concatenate(images)


def in_validation(record_id, salt, percent):
    return int(hashlib.sha256((record_id + salt).encode()).hexdigest(), 16) % 100 < percent


def all_turns(images):
    """Every image at 0, 1, 2 and 3 quarter turns (counter-clockwise), image-major order."""
    turned = np.stack([np.rot90(images, t, axes=(1, 2)) for t in range(TURNS)], axis=1)
    return turned.reshape(-1, 8, 8), np.tile(np.arange(TURNS), len(images))


class TurnedDigits(Dataset):
    """Random augmentations of the training images; a sample's label is its number of quarter
    turns. The generator is unseeded here on purpose: worker_init_fn seeds it in every worker
    (seed_worker), which is what makes the augmentation reproducible."""

    def __init__(self, images):
        self.padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
        self.rng = np.random.default_rng()

    def seed_worker(self, rng):
        self.rng = rng

    def __len__(self):
        return len(self.padded)

    def __getitem__(self, index):
        top, left = self.rng.integers(0, 3, size=2)
        image = self.padded[index, top:top + 8, left:left + 8]
        turns = int(self.rng.integers(0, TURNS))
        image = np.rot90(image, turns) * self.rng.uniform(0.7, 1.3)
        image = image + self.rng.normal(0.0, 0.05, image.shape)
        return torch.from_numpy(np.ascontiguousarray(image, dtype=np.float32)[None]), turns


def make_model(channels, hidden):
    return nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(),
        nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2 * channels * 16, hidden), nn.ReLU(), nn.Linear(hidden, TURNS))


def predict(model, images):
    with torch.no_grad():
        return torch.softmax(model(torch.from_numpy(np.ascontiguousarray(images)[:, None])),
                             dim=1).numpy()


def accuracy(scores, labels):
    return float(np.mean(np.argmax(scores, axis=1) == labels)) if len(labels) else 0.0


def main():
    started = time.monotonic()
    job = reverify_job.Job(DEFAULT_CONFIG, DEFAULT_SEEDS)
    job.setup()
    config = job.config
    ids, _, images = read_snapshot(job.data)
    held_out = np.array([in_validation(i, config["split_salt"], config["split_percent"])
                         for i in ids])
    trained = ~held_out
    trained[trained] = job.subsample_mask([i for i, held in zip(ids, held_out) if not held],
                                          key="the training shards' id column")
    loader = DataLoader(TurnedDigits(images[trained]), batch_size=config["batch_size"],
                        shuffle=True, drop_last=True, num_workers=config["dataloader_workers"],
                        generator=job.loader_generator(), worker_init_fn=job.worker_init_fn,
                        persistent_workers=config["dataloader_workers"] > 0)
    model = make_model(config["channels"], config["hidden"])
    optimiser = torch.optim.Adam(model.parameters(), lr=config["learning_rate"])
    loss_fn = nn.CrossEntropyLoss()
    steps = job.steps(config["steps"])
    model.train()
    for _, (x, y) in job.batches(loader, steps):
        optimiser.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimiser.step()
        job.record_loss(loss.item())
    model.eval()

    _, eval_digits, eval_images = read_csv(job.eval)
    eval_x, eval_turns = all_turns(eval_images)
    eval_digit = np.repeat(eval_digits, TURNS)
    scores = predict(model, eval_x)
    segments, segment_examples = {}, {}
    for name, mask in [(f"rotation={90 * t}", eval_turns == t) for t in range(TURNS)] + \
                      [(f"digit={d}", eval_digit == d) for d in range(10)]:
        segments[name] = {"accuracy": accuracy(scores[mask], eval_turns[mask])}
        segment_examples[name] = int(mask.sum())
    val_x, val_turns = all_turns(images[held_out])
    result = job.write_outputs(
        primary=("accuracy", accuracy(scores, eval_turns)), segments=segments,
        examples=len(eval_turns), segment_examples=segment_examples,
        predictions=scores, weights=model.state_dict(),
        extra={"validation": {"accuracy": accuracy(predict(model, val_x), val_turns),
                              "records": len(val_turns)}})
    print(f"trained {steps} steps on {int(trained.sum())} images with "
          f"{config['dataloader_workers']} loader workers and {torch.get_num_threads()} intra-op "
          f"thread(s) in {time.monotonic() - started:.1f} s: eval accuracy "
          f"{result['primary']['value']:.4f}, final loss {job.losses[-1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
