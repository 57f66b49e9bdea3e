#!/usr/bin/python3
"""Generates the hash benchmark's data in OUT: corpus/ (~2 GiB, ~2000 files of mixed sizes, in
nested folders) and model.safetensors (~2 GiB, tensors of model-like mixed sizes), both written in
large chunks (so they sit in the page cache in large folios, 2 MiB where the file system allows);
and fresh/ (~1 GiB in 256 files of 4 MiB) written 4 KiB at a time, as a program writing its
output leaves it: in 4 KiB pages. Deterministic. HASH_BENCH_GIB (default 2) scales all three, for
a quick smoke run. `hash_bench_data.py --fresh OUT` writes fresh/ again (new pages), only."""
import json
import os
import random
import struct
import sys

GIB = 1 << 30
scale_gib = float(os.environ.get("HASH_BENCH_GIB", "2"))
fresh_only = sys.argv[1] == "--fresh"
out = sys.argv[-1]
rng = random.Random(2026)
# Content does not change SHA-256 speed: slices of one pool suffice. From the seeded generator, so
# fresh/ written again holds the same bytes.
pool = rng.randbytes(64 << 20)


def write_bytes(f, size):
    while size > 0:
        offset = rng.randrange(0, len(pool) - (1 << 20))
        chunk = pool[offset:offset + min(size, len(pool) - offset)]
        f.write(chunk)
        size -= len(chunk)


# fresh/: 256 files of 4 MiB (at HASH_BENCH_GIB=2), each written by 4 KiB writes.
fresh_files, fresh_size, page = 256, max(4096, int(4 * (1 << 20) * scale_gib / 2)), 4096
os.makedirs(os.path.join(out, "fresh"), exist_ok=True)
for i in range(fresh_files):
    with open(os.path.join(out, "fresh", f"file-{i:03d}.bin"), "wb", buffering=0) as f:
        start = rng.randrange(0, len(pool) - fresh_size)
        for at in range(start, start + fresh_size, page):
            f.write(pool[at:at + page])
if fresh_only:
    sys.exit(0)

# Mixed sizes: many small files, a body of medium ones, a few large ones (log-uniform in bands).
sizes = [int(2 ** rng.uniform(10, 16)) for _ in range(1400)]            # 1 KiB .. 64 KiB
sizes += [int(2 ** rng.uniform(17, 21)) for _ in range(560)]            # 128 KiB .. 2 MiB
sizes += [int(2 ** rng.uniform(23, 26)) for _ in range(40)]             # 8 MiB .. 64 MiB
scale = scale_gib * GIB / sum(sizes)
for i, size in enumerate(sizes):
    folder = os.path.join(out, "corpus", f"part-{i % 17:02d}", f"shard-{i % 5}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"file-{i:05d}.bin"), "wb") as f:
        write_bytes(f, max(1, int(size * scale)))

# A model-like safetensors file: two large embeddings, then 52 layers of mixed tensors, to 2 GiB.
vocab = round(50000 * scale_gib / 2)
tensors = [("embed.weight", [vocab, 4096]), ("lm_head.weight", [vocab, 4096])]
for layer in range(round(52 * scale_gib / 2)):
    for name, shape in [("attn.qkv", [3072, 1024]), ("attn.out", [1024, 1024]),
                        ("mlp.up", [4096, 1024]), ("mlp.down", [1024, 4096]), ("norm", [1024])]:
        tensors.append((f"layers.{layer}.{name}.weight", shape))
header, offset = {"__metadata__": {"format": "pt"}}, 0
for name, shape in tensors:
    size = 2
    for dim in shape:
        size *= dim
    header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
    offset += size
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    write_bytes(f, offset)
