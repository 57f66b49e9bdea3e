"""reverify_job: reverify's rebuild contract for a training job, in one file.

Install it (`pip install ./python` from reverify's repository) or copy this one file into your
pipeline: the contract needs nothing beyond Python's standard library; the numpy and PyTorch
helpers import those libraries only when called. docs/job-guide.md is the guide, docs/design.md
("The rebuild contract", "The subsample rule") the contract itself.

    import reverify_job
    job = reverify_job.Job(default_config=CONFIG, default_seeds=SEEDS)  # reads the contract
    job.setup()                      # seeds python, numpy, torch (if imported); torch determinism
    order_rng = job.numpy_rng("dataloader")                 # one generator per seed name
    train = [r for r, keep in zip(records, job.subsample_mask(keys)) if keep]
    for step in range(job.steps(CONFIG["steps"])):          # steps mode stops at N
        ...
        job.record_loss(loss)
    job.write_outputs(primary=("accuracy", acc), predictions=scores, weights=params)

What it reads: REVERIFY_MODE (full | steps | subsample), REVERIFY_MAX_STEPS, REVERIFY_CONFIG and
REVERIFY_SEEDS (JSON files, merged over the job's defaults), REVERIFY_SEED_OVERRIDE (replaces every
seed), REVERIFY_SUBSAMPLE_FRACTION and REVERIFY_SUBSAMPLE_SALT, REVERIFY_DATA, REVERIFY_EVAL and
REVERIFY_OUT (./out when unset, so a job still runs by hand). A malformed value raises
ContractError naming the variable: a job that cannot follow the contract must fail loudly.
"""
import hashlib
import json
import os
import pathlib
import platform
import random as _random
import struct
import sys

__version__ = "1.0.0"

MODES = ("full", "steps", "subsample")
KEYS_FILE = "subsample-keys.txt"
TWO64 = 2**64
MAX_FRACTION_DIGITS = 18
_TORCH_DEFAULTS = {"deterministic_algorithms": True, "tf32": False, "intra_op_threads": 1,
                   "inter_op_threads": 1, "dataloader_workers": 0}


class ContractError(ValueError):
    """A contract variable, file or output that does not follow docs/design.md."""


# --- The subsample rule (docs/design.md, "The subsample rule"), byte for byte -------------------

class Fraction:
    """A subsample fraction read exactly from its decimal text: numerator / 10**digits."""

    def __init__(self, numerator, digits, text):
        self.numerator, self.digits, self.text = numerator, digits, text

    def __repr__(self):
        return f"Fraction({self.text!r})"

    def scale(self, count):
        """ceil(count * fraction) in exact integers: a step-counted schedule in subsample mode."""
        return -(-count * self.numerator // 10**self.digits)


def parse_fraction(text):
    """Reads "0.25", "1", "1.0": ASCII digits, optionally "." and more digits, in (0, 1], at most
    18 digits after the point once trailing zeros are dropped. No sign, exponent or spaces."""
    whole, point, part = str(text).partition(".")
    if not _ascii_digits(whole) or (point and not _ascii_digits(part)):
        raise ContractError(f"subsample fraction {text!r}: not a plain decimal such as 0.25")
    part = part.rstrip("0")
    if len(part) > MAX_FRACTION_DIGITS:
        raise ContractError(f"subsample fraction {text!r}: more than {MAX_FRACTION_DIGITS} digits "
                            "after the point")
    numerator, digits = int(whole + part), len(part)
    if numerator == 0 or numerator > 10**digits:
        raise ContractError(f"subsample fraction {text!r}: not in (0, 1]")
    canonical = (whole.lstrip("0") or "0") + ("." + part if part else "")
    return Fraction(numerator, digits, canonical)


def _ascii_digits(text):
    return text.isascii() and text.isdigit()


def _as_fraction(fraction):
    return fraction if isinstance(fraction, Fraction) else parse_fraction(fraction)


def _key_bytes(key):
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    raise ContractError(f"subsample key {key!r}: must be str or bytes, the text exactly as stored "
                        "(an integer id's decimal text: str(id))")


def subsample_hash(salt, key):
    """h: the first 8 bytes of SHA-256(salt ":" key), big-endian."""
    digest = hashlib.sha256(_key_bytes(salt) + b":" + _key_bytes(key)).digest()
    return int.from_bytes(digest[:8], "big")


def in_subsample(key, salt, fraction):
    """Whether the record with this key is in the subsample (hash_in_subsample of its h)."""
    return hash_in_subsample(subsample_hash(salt, key), fraction)


def hash_in_subsample(h, fraction):
    """Whether a record whose hash is h is a member: h * 10**d < m * 2**64, exact integers."""
    f = _as_fraction(fraction)
    return h * 10**f.digits < f.numerator * TWO64


def subsample_threshold(fraction):
    """T = ceil(m * 2**64 / 10**d): the members are exactly the records with h < T."""
    f = _as_fraction(fraction)
    return -(-(f.numerator * TWO64) // 10**f.digits)


def content_key(record_bytes):
    """The key of a record without an id: the hex SHA-256 of its stored bytes (a CSV record's
    bytes without its line ending, csv_records(); an npy row's bytes, npy_row_keys())."""
    return hashlib.sha256(record_bytes).hexdigest()


def keys_digest(keys):
    """(sha256 hex, distinct count) of the distinct keys sorted bytewise, each followed by a line
    feed: the bytes of subsample-keys.txt."""
    text = _keys_text(keys)
    return hashlib.sha256(text).hexdigest(), text.count(b"\n")


def _keys_text(keys):
    distinct = sorted({_key_bytes(k) for k in keys})
    for key in distinct:
        if not key or b"\n" in key:
            raise ContractError(f"subsample key {key!r}: a key is non-empty and holds no line feed")
    return b"".join(k + b"\n" for k in distinct)


def csv_records(data):
    """The records of a CSV document (bytes): split at LF or CRLF outside double quotes, the line
    ending not part of the record, empty lines skipped, the first record (the header) dropped."""
    records, start, quoted = [], 0, False
    for index, byte in enumerate(data):
        if byte == 0x22:
            quoted = not quoted
        elif byte == 0x0A and not quoted:
            records.append(data[start:index])
            start = index + 1
    records.append(data[start:])
    records = [r[:-1] if r.endswith(b"\r") else r for r in records]
    return [r for r in records if r][1:]


def read_csv(path, key_column=None):
    """(header, rows, keys) of a CSV file: rows are lists of field strings; keys are the
    key_column's values exactly as stored or, without one, each record's content key."""
    import csv
    records = csv_records(pathlib.Path(path).read_bytes())
    header_line = pathlib.Path(path).read_bytes().split(b"\n", 1)[0].rstrip(b"\r")
    header = next(csv.reader([header_line.decode("utf-8")]))
    rows = [next(csv.reader([r.decode("utf-8")])) for r in records]
    if key_column is None:
        keys = [content_key(r) for r in records]
    else:
        column = header.index(key_column)
        keys = [row[column] for row in rows]
    return header, rows, keys


def npy_row_keys(array):
    """Content keys of a 2-D numpy array's rows: each row's bytes in its stored dtype, C order."""
    import numpy as np
    rows = np.ascontiguousarray(array)
    return [content_key(rows[i].tobytes()) for i in range(len(rows))]


# --- The job ------------------------------------------------------------------------------------

def _json_file(environ, variable):
    path = environ.get(variable)
    if not path:
        return {}
    try:
        value = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ContractError(f"{variable}={path}: not a readable JSON file ({error})") from None
    if not isinstance(value, dict):
        raise ContractError(f"{variable}={path}: expected a JSON object")
    return value


def _integer(environ, variable, minimum):
    text = environ.get(variable)
    if text is None or not text.lstrip("-").isdigit() or int(text) < minimum:
        raise ContractError(f"{variable}={text!r}: expected an integer >= {minimum}")
    return int(text)


class Job:
    """One run of a training job under the rebuild contract (read from `environ`, os.environ by
    default). config and seeds are the job's defaults with REVERIFY_CONFIG and REVERIFY_SEEDS on
    top; REVERIFY_SEED_OVERRIDE replaces every seed."""

    def __init__(self, default_config=None, default_seeds=None, environ=None):
        env = os.environ if environ is None else environ
        self.config = dict(default_config or {})
        self.config.update(_json_file(env, "REVERIFY_CONFIG"))
        self.seeds = dict(default_seeds or {})
        self.seeds.update(_json_file(env, "REVERIFY_SEEDS"))
        self.seed_override = None
        if env.get("REVERIFY_SEED_OVERRIDE"):
            self.seed_override = _integer(env, "REVERIFY_SEED_OVERRIDE", 0)
            self.seeds = {name: self.seed_override for name in self.seeds}
        self.mode = env.get("REVERIFY_MODE", "full")
        if self.mode not in MODES:
            raise ContractError(f"REVERIFY_MODE={self.mode!r}: expected full, steps or subsample")
        self.max_steps = _integer(env, "REVERIFY_MAX_STEPS", 0) if self.mode == "steps" else None
        self.fraction = self.salt = None
        if self.mode == "subsample":
            self.fraction = parse_fraction(env.get("REVERIFY_SUBSAMPLE_FRACTION", ""))
            self.salt = env.get("REVERIFY_SUBSAMPLE_SALT") or None
            if self.salt is None:
                raise ContractError("REVERIFY_SUBSAMPLE_SALT: required in subsample mode")
        self.data = env.get("REVERIFY_DATA")
        self.eval = env.get("REVERIFY_EVAL")
        self.out = pathlib.Path(env.get("REVERIFY_OUT") or "out")
        self.losses, self.steps_metric = [], "loss"
        self.seeded = []
        self.subsample_report = None

    # --- seeds ---

    def seed(self, name):
        """The seed called `name`. A name neither the defaults nor REVERIFY_SEEDS hold is an
        error, never a silent fallback: a generator seeded from nothing the contract controls
        would not change under REVERIFY_SEED_OVERRIDE."""
        if name not in self.seeds:
            raise ContractError(f"seed {name!r}: not in REVERIFY_SEEDS nor the job's default seeds "
                                f"({', '.join(sorted(self.seeds)) or 'none'}); add it to both")
        return int(self.seeds[name])

    def derive_seed(self, name, *parts):
        """A 63-bit seed derived from seed `name` and parts (a worker id, an epoch): the same
        inputs give the same seed on every machine; the seed override moves it."""
        text = ":".join([str(self.seed(name))] + [str(p) for p in parts])
        digest = hashlib.sha256(b"reverify-seed:" + text.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def random(self, name, *parts):
        """A random.Random of its own, seeded from seed `name` (and parts)."""
        return _random.Random(self.derive_seed(name, *parts) if parts else self.seed(name))

    def numpy_rng(self, name, *parts):
        """A numpy Generator of its own, seeded from seed `name` (and parts, e.g. a worker id)."""
        import numpy as np
        return np.random.default_rng(self.derive_seed(name, *parts) if parts else self.seed(name))

    def setup(self):
        """Seeds python's random (seed "python"), numpy's global generator ("numpy") when numpy
        is installed, and torch ("framework", with its determinism settings from the config)
        when the job has imported torch: import torch before calling setup(). A name the job
        does not declare gets a seed derived from all of its seeds."""
        _random.seed(self._seed_or("python"))
        self.seeded.append("python")
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None:
            np.random.seed(self._seed_or("numpy") % 2**32)
            self.seeded.append("numpy")
        if "torch" in sys.modules:
            self._setup_torch(sys.modules["torch"])
            self.seeded.append("torch")

    def _seed_or(self, name):
        """Seed `name`; for a job that declares none of that name, one derived from all its
        seeds (so the seed override still moves it)."""
        if name in self.seeds:
            return self.seed(name)
        if not self.seeds:
            raise ContractError("no seeds: give default_seeds or REVERIFY_SEEDS")
        text = json.dumps(sorted(self.seeds.items()))
        digest = hashlib.sha256(f"reverify-seed:{name}:{text}".encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def _setup_torch(self, torch):
        for key, value in _TORCH_DEFAULTS.items():
            self.config.setdefault(key, value)
        torch.manual_seed(self._seed_or("framework"))
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        deterministic = bool(self.config["deterministic_algorithms"])
        torch.use_deterministic_algorithms(deterministic)
        torch.backends.cudnn.deterministic = deterministic
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = bool(self.config["tf32"])
        torch.backends.cudnn.allow_tf32 = bool(self.config["tf32"])
        torch.set_num_threads(int(self.config["intra_op_threads"]))
        if torch.get_num_interop_threads() != int(self.config["inter_op_threads"]):
            torch.set_num_interop_threads(int(self.config["inter_op_threads"]))  # once a process

    def loader_generator(self):
        """A torch.Generator for a DataLoader, seeded from seed "dataloader": the shuffle order and
        every epoch's worker base seed come from it."""
        import torch
        return torch.Generator().manual_seed(self.seed("dataloader"))

    def worker_init_fn(self, worker_id):
        """A DataLoader's worker_init_fn. In a worker torch.initial_seed() is base_seed +
        worker_id, base_seed drawn from loader_generator() each epoch: it seeds random and
        numpy's global generator there, and hands the dataset (through its seed_worker(rng)
        method, when it has one) a numpy Generator seeded from (seed "augmentation", that seed)."""
        import numpy as np
        import torch
        worker_seed = torch.initial_seed()
        _random.seed(worker_seed)
        np.random.seed(worker_seed % 2**32)
        dataset = torch.utils.data.get_worker_info().dataset
        if hasattr(dataset, "seed_worker"):
            dataset.seed_worker(np.random.default_rng([self.seed("augmentation"), worker_seed]))

    # --- subsample mode ---

    def subsample_mask(self, keys, key="record id"):
        """One bool per key: is the record trained on? Pass the keys of every record the job would
        train on in full mode (after its own validation split). Outside subsample mode, all True.
        In subsample mode the rule decides, and the drawn keys are reported in result.json
        (`key` says what a key is, in words) and written to subsample-keys.txt."""
        keys = list(keys)
        if self.mode != "subsample":
            return [True] * len(keys)
        mask = [in_subsample(k, self.salt, self.fraction) for k in keys]
        self.report_subsample([k for k, m in zip(keys, mask) if m], len(keys), key)
        return mask

    def report_subsample(self, trained_keys, candidates, key):
        """Records which records the job trained on, for a job that draws its subsample itself;
        subsample_mask() calls it. reverify checks every key against the rule."""
        trained_keys = list(trained_keys)
        digest, distinct = keys_digest(trained_keys)
        self.subsample_report = {"fraction": self.fraction.text, "salt": self.salt, "key": key,
                                 "candidates": int(candidates), "records": len(trained_keys),
                                 "keys": distinct, "keys_sha256": digest, "keys_file": KEYS_FILE}
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / KEYS_FILE).write_bytes(_keys_text(trained_keys))

    # --- steps ---

    def steps(self, configured):
        """Optimizer steps to run for a schedule counted in steps (over the whole data): the
        configured number; at most REVERIFY_MAX_STEPS in steps mode; in subsample mode
        ceil(configured * fraction), in exact integers (the same epochs on fewer records)."""
        if self.max_steps is not None:
            return min(configured, self.max_steps)
        return self.scaled(configured)

    def epoch_steps(self, epochs, steps_per_epoch):
        """Optimizer steps to run for a schedule counted in epochs: epochs * steps_per_epoch,
        steps_per_epoch counted on the records trained on (so subsample mode keeps the epochs and
        runs fewer steps, never scaled twice); at most REVERIFY_MAX_STEPS in steps mode."""
        total = epochs * steps_per_epoch
        return min(total, self.max_steps) if self.max_steps is not None else total

    def scaled(self, count):
        """A step-counted schedule milestone (warm-up, decay step) in subsample mode:
        ceil(count * fraction); unchanged in the other modes."""
        return self.fraction.scale(count) if self.fraction is not None else count

    def batches(self, loader, steps):
        """Yields (step, batch) for `steps` steps, iterating `loader` again each epoch. Without
        worker processes a torch dataset's generator is seeded here (seed "augmentation")."""
        workers = getattr(loader, "num_workers", None)
        dataset = getattr(loader, "dataset", None)
        if workers == 0 and hasattr(dataset, "seed_worker"):
            import numpy as np
            dataset.seed_worker(np.random.default_rng([self.seed("augmentation")]))
        step = 0
        while step < steps:
            progressed = False
            for batch in loader:
                if step == steps:
                    return
                progressed = True
                yield step, batch
                step += 1
            if not progressed:
                raise ContractError("batches(): the loader yielded nothing")

    def record_loss(self, value, metric="loss"):
        """The per-step curve (result.json steps): one value per optimizer step. In steps mode,
        a step past REVERIFY_MAX_STEPS is an error: steps mode must stop at N."""
        if self.max_steps is not None and len(self.losses) >= self.max_steps:
            raise ContractError(f"steps mode: step {len(self.losses) + 1} recorded, but "
                                f"REVERIFY_MAX_STEPS is {self.max_steps}")
        self.steps_metric = metric
        self.losses.append(float(value))

    # --- outputs ---

    def write_predictions(self, scores, name="predictions.npy", dtype="float32"):
        """One row per eval record in eval-set order: a 1-D list of scores or 2-D class scores
        (a numpy array, a torch tensor or nested lists), as float32 or float64 .npy."""
        self.out.mkdir(parents=True, exist_ok=True)
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        write_npy(self.out / name, scores, dtype)
        return name

    def write_weights(self, tensors, name="model.safetensors", dtype=None):
        """{name: numpy array | torch tensor} (a state_dict) as safetensors; dtype (e.g.
        "float32") casts numpy arrays first."""
        self.out.mkdir(parents=True, exist_ok=True)
        write_safetensors(self.out / name, tensors, dtype)
        return name

    def write_result(self, primary, segments=None, examples=None, segment_examples=None,
                     predictions="predictions.npy", weights="model.safetensors", extra=None):
        """Writes result.json. primary: (name, value); segments: {segment: {metric: value}};
        examples / segment_examples: the number of eval records a proportion counts over."""
        self._check_before_writing()
        result = {"primary": {"name": primary[0], "value": float(primary[1])}}
        if examples is not None:
            result["primary"]["examples"] = int(examples)
        if segments:
            result["segments"] = {s: {m: float(v) for m, v in ms.items()}
                                  for s, ms in segments.items()}
        if segment_examples:
            result["segment_examples"] = {s: int(k) for s, k in segment_examples.items()}
        if self.losses:
            result["steps"] = {"metric": self.steps_metric, "values": self.losses}
        if predictions:
            result["predictions"] = predictions
        if weights:
            result["weights"] = weights
        if self.subsample_report:
            result["subsample"] = self.subsample_report
        if "torch" in self.seeded:  # set up by the kit: its facts are the job's own
            result["environment"] = torch_environment(self.config)
        result.update(extra or {})
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
        return result

    def write_outputs(self, primary, predictions, weights, weights_dtype=None, **result):
        """write_predictions, write_weights and write_result in one call."""
        return self.write_result(primary, predictions=self.write_predictions(predictions),
                                 weights=self.write_weights(weights, dtype=weights_dtype), **result)

    def _check_before_writing(self):
        if self.mode == "subsample" and self.subsample_report is None:
            raise ContractError("subsample mode: the job never drew its subsample "
                                "(job.subsample_mask(keys) or job.report_subsample(...))")
        if self.seeded and "torch" in sys.modules and "torch" not in self.seeded:
            raise ContractError("torch was imported after job.setup(), so it was never seeded: "
                                "import torch first")


# --- File formats ---------------------------------------------------------------------------------

def write_npy(path, values, dtype="float32"):
    """An .npy file (format 1.0): numpy's own writer when values is a numpy array, else the
    format written here from nested lists (1-D or 2-D)."""
    code = {"float32": ("<f4", "f"), "float64": ("<f8", "d")}.get(dtype)
    if code is None:
        raise ContractError(f"predictions dtype {dtype!r}: expected float32 or float64")
    if type(values).__module__ == "numpy":
        import numpy as np
        np.save(path, np.ascontiguousarray(values, dtype=code[0]))
        return
    rows = [list(v) if isinstance(v, (list, tuple)) else v for v in values]
    two_d = bool(rows) and isinstance(rows[0], list)
    shape = (len(rows), len(rows[0])) if two_d else (len(rows),)
    flat = [float(x) for row in rows for x in row] if two_d else [float(x) for x in rows]
    header = f"{{'descr': '{code[0]}', 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * (21 - len(repr(shape[0])))  # room to grow the first axis, as numpy leaves
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin-1"))
        out.write(struct.pack(f"<{len(flat)}{code[1]}", *flat))


_SAFETENSORS_DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
                       "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
                       "uint8": "U8", "bool": "BOOL"}


def _tensor_bytes(name, tensor, dtype):
    """(safetensors dtype, shape, little-endian bytes) of a numpy array or torch tensor."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach().cpu().contiguous()
        kind = str(tensor.dtype).replace("torch.", "")
        if kind not in _SAFETENSORS_DTYPES:
            raise ContractError(f"weights {name}: dtype {kind} has no safetensors name here")
        shape = list(tensor.shape)
        array = (tensor.view(sys.modules["torch"].int16) if kind == "bfloat16" else tensor).numpy()
    else:
        import numpy as np
        array = np.asarray(tensor, dtype=dtype) if dtype else np.asarray(tensor)
        kind, shape = str(array.dtype), list(array.shape)
        if kind not in _SAFETENSORS_DTYPES:
            raise ContractError(f"weights {name}: dtype {kind} has no safetensors name here")
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
    return _SAFETENSORS_DTYPES[kind], shape, data


def write_safetensors(path, tensors, dtype=None):
    """The safetensors layout: u64 little-endian header size, JSON header (tensors sorted by name,
    contiguous offsets), then each tensor's raw little-endian bytes."""
    header, blobs, offset, torch_used = {}, [], 0, False
    for name in sorted(tensors):
        torch_used |= hasattr(tensors[name], "detach")
        kind, shape, data = _tensor_bytes(name, tensors[name], dtype)
        header[name] = {"dtype": kind, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt" if torch_used else "np"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)


def torch_environment(config):
    """What only a torch job can see, in the manifest's environment shape (reverify capture
    records it): versions, determinism flags as set, thread counts; the GPU when one was used."""
    torch = sys.modules["torch"]
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
                    "dataloader_workers": int(config.get("dataloader_workers", 0))},
    }
    if torch.cuda.is_available():
        version = torch.backends.cudnn.version()
        env["accelerator"] = {
            "model": torch.cuda.get_device_name(0), "count": torch.cuda.device_count(),
            "cuda": torch.version.cuda,
            "cudnn": None if version is None else
            f"{version // 1000}.{version // 100 % 10}.{version % 100}"}
    return env


def _main(argv):
    """python3 reverify_job.py KEY... --fraction F --salt S: the rule for each key, as
    `reverify subsample` prints it (h in hex, member or not, the key)."""
    import argparse
    parser = argparse.ArgumentParser(description=_main.__doc__)
    parser.add_argument("keys", nargs="*")
    parser.add_argument("--fraction", required=True)
    parser.add_argument("--salt", required=True)
    args = parser.parse_args(argv)
    fraction = parse_fraction(args.fraction)
    print(f"fraction {fraction.text}: members are the keys with h < {subsample_threshold(fraction)}")
    for key in args.keys:
        h = subsample_hash(args.salt, key)
        member = hash_in_subsample(h, fraction)
        print(f"{h:016x}  {'in ' if member else 'out'}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
