"""reverify's rebuild contract for a PyTorch training script, in one file to copy into a pipeline.

    import reverify_contract
    job = reverify_contract.Job(default_config=CONFIG, default_seeds=SEEDS)  # reads the contract
    job.setup()                      # seeds python/numpy/torch, determinism flags, thread counts
    records = records[job.subsample_mask(record_ids)]  # subsample mode: the fixed subsample
    loader = DataLoader(dataset, batch_size=..., shuffle=True,
                        num_workers=job.config["dataloader_workers"],
                        generator=job.loader_generator(), worker_init_fn=job.worker_init_fn)
    for step, (x, y) in job.batches(loader, job.steps(CONFIG["steps"])):
        ...
        job.record_loss(loss.item())
    job.write_outputs(primary=("accuracy", acc), segments={...}, examples=n,
                      segment_examples={...}, predictions=scores, state_dict=model.state_dict())

What it reads (docs/design.md, "The rebuild contract"): REVERIFY_CONFIG and REVERIFY_SEEDS (JSON
files, merged over the script's defaults), REVERIFY_SEED_OVERRIDE (calibration: replaces every
seed), REVERIFY_MODE and REVERIFY_MAX_STEPS (steps mode stops after N optimizer steps),
REVERIFY_SUBSAMPLE_FRACTION and REVERIFY_SUBSAMPLE_SALT (subsample mode), REVERIFY_DATA,
REVERIFY_EVAL (read-only inputs) and REVERIFY_OUT (where the outputs go). Without REVERIFY_OUT it
writes to ./out, so the script still runs by hand.

Subsample mode (REVERIFY_MODE=subsample): the job trains to completion on the training records
whose stable key K is in the subsample, and is scored on the whole frozen eval set. K is in it
iff the first 8 bytes of sha256(salt + ":" + K), read as a big-endian unsigned integer, are below
fraction * 2**64 (subsample_mask(keys) or in_subsample(key); the script says what its key is).
steps(configured) then runs the same number of epochs as the full run: configured * fraction
optimizer steps, rounded up.

Seeds it uses, by name (a missing name falls back to "framework", then 0):
  python -> random.seed; numpy -> np.random.seed (the legacy global generator);
  framework -> torch.manual_seed (weight init, dropout, everything drawn in the main process);
  dataloader -> the DataLoader's generator (shuffle order, and each epoch's worker base seed);
  augmentation -> mixed with each worker's seed into the generator handed to the dataset.
torch (>= 1.9) reseeds `random`, `torch` and numpy's legacy global generator in every worker from
the loader's generator by itself; what it cannot know about is a generator the dataset owns (a
numpy Generator, a random.Random). worker_init_fn hands each worker a fresh numpy Generator seeded
from (seeds["augmentation"], the worker's torch seed) through the dataset's `seed_worker(rng)`
method when it has one: that is the line that makes augmentation in workers reproducible.

Determinism settings applied by setup(), all read from the config with these defaults:
  torch.use_deterministic_algorithms(True) ("deterministic_algorithms"),
  cudnn.deterministic = True, cudnn.benchmark = False, TF32 off for matmul and cuDNN ("tf32"),
  torch.set_num_threads(config["intra_op_threads"]), torch.set_num_interop_threads(
  config["inter_op_threads"]), and CUBLAS_WORKSPACE_CONFIG=:4096:8 when the environment has none
  (cuBLAS reads it when CUDA starts, which is after this).

write_outputs() writes $REVERIFY_OUT/result.json, predictions.npy and model.safetensors (the
safetensors layout written directly: 8-byte little-endian header length, JSON header, raw
little-endian tensor bytes; Debian 12 has no safetensors package), and records in result.json's
"environment" what only the job can see, for `reverify capture`: the torch version, the
determinism flags as actually set, the thread counts, the data-loader worker count, and CUDA,
cuDNN and the GPU model when a GPU was used (on a CPU-only run those are absent, not guessed).
"""
import hashlib
import json
import math
import os
import pathlib
import platform
import random
import struct

import numpy as np
import torch

_DETERMINISM_DEFAULTS = {"deterministic_algorithms": True, "tf32": False,
                         "intra_op_threads": 1, "inter_op_threads": 1, "dataloader_workers": 0}
_SAFETENSORS_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
                       torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
                       torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def _json_file(variable, default):
    path = os.environ.get(variable)
    return json.loads(pathlib.Path(path).read_text()) if path else dict(default)


class Job:
    def __init__(self, default_config, default_seeds):
        self.config = dict(_DETERMINISM_DEFAULTS, **default_config)
        self.config.update(_json_file("REVERIFY_CONFIG", {}))
        self.seeds = dict(default_seeds, **_json_file("REVERIFY_SEEDS", {}))
        override = os.environ.get("REVERIFY_SEED_OVERRIDE")
        if override:
            self.seeds = {name: int(override) for name in self.seeds}
        self.mode = os.environ.get("REVERIFY_MODE", "full")
        if self.mode not in ("full", "steps", "subsample"):
            raise ValueError(f"REVERIFY_MODE: expected full, steps or subsample, got {self.mode!r}")
        self.max_steps = int(os.environ["REVERIFY_MAX_STEPS"]) if self.mode == "steps" else None
        self.subsample_fraction, self.subsample_salt = 1.0, None
        if self.mode == "subsample":
            self.subsample_fraction = float(os.environ["REVERIFY_SUBSAMPLE_FRACTION"])
            self.subsample_salt = os.environ["REVERIFY_SUBSAMPLE_SALT"]
            if not 0 < self.subsample_fraction <= 1:
                raise ValueError("REVERIFY_SUBSAMPLE_FRACTION: expected a number in (0, 1], got "
                                 f"{self.subsample_fraction!r}")
        self.data = os.environ.get("REVERIFY_DATA")
        self.eval = os.environ.get("REVERIFY_EVAL")
        self.out = pathlib.Path(os.environ.get("REVERIFY_OUT", "out"))
        self.losses = []

    def seed(self, name):
        return int(self.seeds.get(name, self.seeds.get("framework", 0)))

    def setup(self):
        random.seed(self.seed("python"))
        np.random.seed(self.seed("numpy") % 2**32)
        torch.manual_seed(self.seed("framework"))
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(bool(self.config["deterministic_algorithms"]))
        torch.backends.cudnn.deterministic = bool(self.config["deterministic_algorithms"])
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = bool(self.config["tf32"])
        torch.backends.cudnn.allow_tf32 = bool(self.config["tf32"])
        torch.set_num_threads(int(self.config["intra_op_threads"]))
        torch.set_num_interop_threads(int(self.config["inter_op_threads"]))

    def loader_generator(self):
        """The DataLoader's generator: shuffle order and every epoch's worker seeds come from it."""
        return torch.Generator().manual_seed(self.seed("dataloader"))

    def worker_init_fn(self, worker_id):
        """Runs in each worker: torch.initial_seed() there is base_seed + worker_id, base_seed drawn
        from loader_generator() once per epoch, so every worker and epoch gets its own seed."""
        worker_seed = torch.initial_seed()
        random.seed(worker_seed)
        np.random.seed(worker_seed % 2**32)
        dataset = torch.utils.data.get_worker_info().dataset
        if hasattr(dataset, "seed_worker"):
            dataset.seed_worker(np.random.default_rng([self.seed("augmentation"), worker_seed]))

    def in_subsample(self, key):
        """Whether the training record with stable key `key` is trained on (always outside
        subsample mode)."""
        if self.subsample_salt is None:
            return True
        digest = hashlib.sha256(f"{self.subsample_salt}:{key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") < self.subsample_fraction * 2**64

    def subsample_mask(self, keys):
        """A boolean numpy mask over `keys`: in_subsample() of each."""
        return np.array([self.in_subsample(k) for k in keys], dtype=bool)

    def steps(self, configured):
        """The number of optimizer steps to run: the config's, fewer in steps mode, and in
        subsample mode the same number of epochs (configured * fraction, rounded up)."""
        if self.max_steps is not None:
            return min(configured, self.max_steps)
        return math.ceil(configured * self.subsample_fraction)

    def batches(self, loader, steps):
        """Yields (step, batch) for `steps` steps, starting a new epoch whenever one runs out.
        Without worker processes the dataset's generator is seeded here, in the main process."""
        if loader.num_workers == 0 and hasattr(loader.dataset, "seed_worker"):
            loader.dataset.seed_worker(np.random.default_rng([self.seed("augmentation")]))
        step = 0
        while step < steps:
            for batch in loader:
                if step == steps:
                    return
                yield step, batch
                step += 1

    def record_loss(self, value):
        self.losses.append(float(value))

    def environment(self):
        cuda = torch.cuda.is_available()
        env = {
            "python": platform.python_version(),
            "framework": {"name": "torch", "version": torch.__version__},
            "determinism": {
                "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
                "cudnn_deterministic": torch.backends.cudnn.deterministic,
                "cudnn_benchmark": torch.backends.cudnn.benchmark,
                "tf32": torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32,
            },
            "threads": {"intra_op": torch.get_num_threads(),
                        "inter_op": torch.get_num_interop_threads(),
                        "dataloader_workers": int(self.config["dataloader_workers"])},
        }
        if cuda:
            env["accelerator"] = {"model": torch.cuda.get_device_name(0),
                                  "count": torch.cuda.device_count(),
                                  "cuda": torch.version.cuda,
                                  "cudnn": _cudnn_version()}
        return env

    def write_outputs(self, primary, segments, predictions, state_dict, examples=None,
                      segment_examples=None, extra=None):
        """primary: (name, value); segments: {segment: {metric: value}}; predictions: one row per
        eval record, in eval-set order. For a metric that is a proportion of eval records (an
        accuracy), examples: k, the number of records it counts over, and segment_examples:
        {segment: k} (result.json's primary.examples and segment_examples: reverify then knows a
        rebuild can move it only in steps of 1/k)."""
        self.out.mkdir(parents=True, exist_ok=True)
        np.save(self.out / "predictions.npy", np.asarray(predictions, dtype=np.float32))
        write_safetensors(self.out / "model.safetensors", state_dict)
        result = {"primary": {"name": primary[0], "value": float(primary[1])},
                  "segments": {s: {m: float(v) for m, v in ms.items()} for s, ms in segments.items()},
                  "steps": {"metric": "loss", "values": self.losses},
                  "predictions": "predictions.npy", "weights": "model.safetensors",
                  "environment": self.environment()}
        if examples is not None:
            result["primary"]["examples"] = int(examples)
        if segment_examples:
            result["segment_examples"] = {s: int(k) for s, k in segment_examples.items()}
        result.update(extra or {})
        (self.out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
        return result


def _cudnn_version():
    version = torch.backends.cudnn.version()
    if version is None:
        return None
    return f"{version // 1000}.{version // 100 % 10}.{version % 100}"  # 8902 -> 8.9.2


def write_safetensors(path, state_dict):
    """The safetensors layout: u64 little-endian header size, JSON header (tensors sorted by name,
    contiguous offsets), then each tensor's raw little-endian bytes."""
    header, blobs, offset = {}, [], 0
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        if tensor.dtype not in _SAFETENSORS_DTYPES:
            raise TypeError(f"{name}: dtype {tensor.dtype} has no safetensors name here")
        array = (tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor).numpy()
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
