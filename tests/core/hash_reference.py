#!/usr/bin/python3
"""Independent reference for reverify's content hashes (Debian python3 standard library only).

  hash_reference.py write-safetensors OUT SEED LAYOUT PAD
      Writes a safetensors file of random tensors drawn from SEED. LAYOUT "sorted" stores the data
      in name order with the header in name order; "shuffled" stores the data and writes the header
      keys in two other seed-derived orders and adds a __metadata__ entry. PAD spaces follow the
      header JSON. The same SEED always gives the same tensors, whatever LAYOUT and PAD.
  hash_reference.py tensor-hash FILE
      Prints one line per tensor, then the tensor-hash root on the last line (docs/design.md).
"""
import hashlib
import json
import random
import struct
import sys

DTYPE_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "I16": 16, "F16": 16,
              "BF16": 16, "I32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64, "F4": 4}
NAME_PARTS = ["layer", "attn", "mlp", "weight", "bias", "Norm", "emb", "ß", "é", "x y", "頭", "0"]


def random_tensors(seed):
    rng = random.Random(seed)
    tensors = {}
    count = rng.randint(1, 40)
    while len(tensors) < count:
        name = ".".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 4)))
        dtype = rng.choice(sorted(DTYPE_BITS))
        shape = [rng.choice([0, 1, 2, 3, 4, 7, 16, 33]) for _ in range(rng.randint(0, 3))]
        elements = 1
        for dim in shape:
            elements *= dim
        if elements * DTYPE_BITS[dtype] % 8:
            shape.append(2)  # whole bytes for the 4-bit dtype
            elements *= 2
        data = rng.randbytes(elements * DTYPE_BITS[dtype] // 8)
        tensors[name] = (dtype, shape, data)
    return tensors


def write_safetensors(out, seed, layout, pad):
    tensors = random_tensors(seed)
    names = sorted(tensors)
    header_order = list(names)
    if layout == "shuffled":
        rng = random.Random(seed * 7919 + 1)
        rng.shuffle(names)
        rng.shuffle(header_order)
    offsets, offset = {}, 0
    for name in names:
        offsets[name] = (offset, offset + len(tensors[name][2]))
        offset += len(tensors[name][2])
    header = {}
    if layout == "shuffled":
        header["__metadata__"] = {"format": "pt", "writer": "hash_reference.py"}
    for name in header_order:
        dtype, shape, _ = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": list(offsets[name])}
    text = json.dumps(header, ensure_ascii=False).encode() + b" " * pad
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in names:
            f.write(tensors[name][2])


def tensor_hash(path):
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length].decode("utf-8"))
    data = blob[8 + length:]
    lines = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        digest = hashlib.sha256(data[begin:end]).hexdigest()
        dims = ",".join(str(d) for d in info["shape"])
        lines.append((name.encode(), f"{name}\t{info['dtype']}\t{dims}\t{digest}\n".encode()))
    text = b"".join(line for _, line in sorted(lines))
    sys.stdout.buffer.write(text)
    print(hashlib.sha256(text).hexdigest())


if __name__ == "__main__":
    if sys.argv[1] == "write-safetensors":
        write_safetensors(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "tensor-hash":
        tensor_hash(sys.argv[2])
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
