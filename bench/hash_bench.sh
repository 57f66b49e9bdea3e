#!/usr/bin/env bash
# Benchmark of `reverify hash` against what a user would run instead, in one run (docs/benchmarks.md "Targets"):
#   corpus/  ~2 GiB, ~2000 files of mixed sizes, written in large chunks: large folios (2 MiB
#            where they fit) in the page cache;
#   fresh/   ~1 GiB in 256 files of 4 MiB, written 4 KiB at a time: 4 KiB pages, as a program's
#            fresh output leaves them. Written again before every timed run, so every run finds
#            fresh pages;
#   model.safetensors  ~2 GiB, its tensor hash (parallel over tensors).
# Baselines over the same files in the same run: parallel `openssl dgst -sha256` (one process per
# core, each given an equal share of the bytes), `sha256sum` (`find | sort | xargs sha256sum`, one
# process), and the limit: `openssl speed -evp sha256` (16 KiB row) a core x cores. Every tool's
# best of HASH_BENCH_RUNS (3) runs counts (the machine is shared); the data is re-read (`cat`)
# before each run of corpus/, so it is all in the page cache. Prints the CPU model and the load,
# and the digest's speed over bytes in memory against bytes in cache (bench/digest_from_memory).
# reverify's --io-stats line says which read path it measured cheapest for each page layout, and
# "2 MiB mappings" how many 2 MiB folios it mapped whole (from /proc/vmstat thp_file_mapped).
# HASH_BENCH_GIB=0.1 makes a quick smoke run.
# Usage: bench/hash_bench.sh [REVERIFY_BINARY]   (default: build/release/cli/reverify, built with
# `cmake --preset release && cmake --build build/release --target reverify`)
set -euo pipefail
cd "$(dirname "$0")/.."
cli=$(realpath "${1:-build/release/cli/reverify}")
work=$(mktemp -d /tmp/reverify-hash-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)
runs=${HASH_BENCH_RUNS:-3}
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)

/usr/bin/python3 bench/hash_bench_data.py "$work"
mkdir "$work/empty"
bytes_of() { du -sb --apparent-size "$1" | cut -f1; }
files_of() { find "$1" -type f | wc -l; }

# HASH_BENCH_WARM=reread drops the page cache first (root only), so corpus/ is found as a read
# from disk leaves it: 2 MiB folios only where read-ahead has ramped up.
warm_mode=${HASH_BENCH_WARM:-cached}
if [[ $warm_mode == reread && ! -w /proc/sys/vm/drop_caches ]]; then
  echo "note: cannot drop the page cache (not root): warming only re-reads cached data" >&2
  warm_mode=cached
fi
warm() {
  if [[ $1 == "$work/fresh" ]]; then
    /usr/bin/python3 bench/hash_bench_data.py --fresh "$work"
    return
  fi
  if [[ $warm_mode == reread ]]; then
    sync
    echo 1 >/proc/sys/vm/drop_caches
  fi
  find "$1" -type f -exec cat {} + >/dev/null
  # Dropping the cache also dropped the programs and their libraries: load them again, so no
  # timed run pays for reading reverify, libcurl, openssl or sha256sum from disk.
  "$cli" hash "$work/empty" >/dev/null
  sha256sum /dev/null >/dev/null
  openssl dgst -sha256 /dev/null >/dev/null
}
now() { date +%s.%N; }
# best_of SECONDS_VAR PATH_TO_WARM COMMAND...: fastest wall time over $runs runs.
best_of() {
  local -n best=$1
  local warm_path=$2
  shift 2
  best=
  for _ in $(seq "$runs"); do
    warm "$warm_path"
    local start end
    start=$(now)
    "$@" >"$work/out" 2>/dev/null
    end=$(now)
    best=$(echo "$start $end ${best:-}" | awk '{t = $2 - $1; if ($3 != "" && $3 < t) t = $3; printf "%.4f", t}')
  done
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
thp_file_mapped() { awk '$1 == "thp_file_mapped" { print $2 }' /proc/vmstat; }

sha256sum_tree() { (cd "$1" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum); }
# One openssl process per core, each on an equal share of the BYTES (files dealt largest first to
# the least loaded process), so no process idles while another still hashes: the same thread count
# as reverify's, each doing the same work. (Until 2026-12-05 the shares were equal file counts,
# which left one process with most of the bytes of a mixed-size corpus.)
openssl_parallel() {
  local lists
  lists=$(mktemp -d "$work/shares.XXXXXX")
  (cd "$1" && find . -type f -printf '%s %P\n') | /usr/bin/python3 -c '
import sys
cores, out = int(sys.argv[1]), sys.argv[2]
files = sorted(((int(size), name) for size, name in (line.rstrip("\n").split(" ", 1) for line in sys.stdin)), reverse=True)
loads, shares = [0] * cores, [[] for _ in range(cores)]
for size, name in files:
    i = loads.index(min(loads))
    loads[i] += size
    shares[i].append(name)
for i, share in enumerate(shares):
    open(f"{out}/{i}", "w").write("".join(n + "\n" for n in sorted(share)))
' "$cores" "$lists"
  local i pids=()
  for ((i = 0; i < cores; i++)); do
    [[ -s $lists/$i ]] || continue
    (cd "$1" && xargs -d '\n' -a "$lists/$i" openssl dgst -sha256 -r) >"$lists/$i.out" &
    pids+=($!)
  done
  local status=0
  for i in "${pids[@]}"; do wait "$i" || status=1; done
  cat "$lists"/*.out
  rm -rf "$lists"
  return $status
}

# The limit first, while nothing of ours runs.
openssl_core=$(openssl speed -evp sha256 -bytes 16384 -seconds 3 2>/dev/null |
  awk '/^sha256/ { sub(/k$/, "", $2); printf "%.0f", $2 * 1000 / 1e6 }')
limit=$((openssl_core * cores))

echo "machine: $cpu, $cores cores, $(uname -r); load average before: $(cut -d' ' -f1-3 /proc/loadavg); corpus/ warmed by: $warm_mode"
echo "limit (openssl speed -evp sha256, 16 KiB row): $openssl_core MB/s a core x $cores = $limit MB/s"
# The same digest over bytes from memory, no file system (built next to reverify by the release
# preset): what is left between it and reverify is the page cache's cost, not the memory's.
from_memory=$(dirname "$cli")/../bench/digest_from_memory
if [[ -x $from_memory ]]; then
  "$from_memory" | sed 's/^/digest from memory, /'
else
  echo "digest from memory: not measured ($from_memory is not built)"
fi

# bench_tree NAME DIR: every tool over DIR, then reverify's CPU time and its measured choice.
bench_tree() {
  local name=$1 dir=$2 bytes files t_sum t_ssl t_rev
  bytes=$(bytes_of "$dir")
  files=$(files_of "$dir")
  best_of t_sum "$dir" sha256sum_tree "$dir"
  cp "$work/out" "$work/sha256sum.out"
  best_of t_ssl "$dir" openssl_parallel "$dir"
  best_of t_rev "$dir" "$cli" hash "$dir"
  # Cross-check: reverify's manifest lines carry the same digests as sha256sum's.
  head -n -1 "$work/out" | awk '{ print $1 "  " substr($0, index($0, $3)) }' |
    cmp -s - "$work/sha256sum.out" || { echo "MISMATCH between reverify and sha256sum digests" >&2; exit 1; }
  # One more run, untimed but counted: CPU time, 2 MiB mappings, what was chosen.
  warm "$dir"
  local before after
  before=$(thp_file_mapped)
  /usr/bin/time -f '%U %S' -o "$work/time" "$cli" hash --io-stats "$dir" >/dev/null 2>"$work/io"
  after=$(thp_file_mapped)
  local cpu_s rev_rate ssl_rate sum_rate
  cpu_s=$(awk '{ printf "%.3f", $1 + $2 }' "$work/time")
  rev_rate=$(mbps "$bytes" "$t_rev")
  ssl_rate=$(mbps "$bytes" "$t_ssl")
  sum_rate=$(mbps "$bytes" "$t_sum")
  echo "$name: $files files, $bytes bytes"
  echo "  sha256sum (one process):            ${t_sum}s  $sum_rate MB/s"
  echo "  openssl dgst -sha256 x $cores processes:  ${t_ssl}s  $ssl_rate MB/s = $(ratio "$ssl_rate" "$limit") of limit"
  echo "  reverify hash DIR:                  ${t_rev}s  $rev_rate MB/s = $(ratio "$rev_rate" "$limit") of limit, $(ratio "$rev_rate" "$ssl_rate")x parallel openssl, $(ratio "$rev_rate" "$sum_rate")x sha256sum"
  echo "  reverify CPU time (user+sys) ${cpu_s}s = $(mbps "$bytes" "$cpu_s") MB/s a core = $(ratio "$(mbps "$bytes" "$cpu_s")" "$openssl_core") of limit; 2 MiB mappings: $((after - before)) ($(ratio "$(((after - before) * 2097152))" "$bytes") of the bytes)"
  sed 's/^/  /' "$work/io"
}

bench_tree "corpus/ (large folios)" "$work/corpus"
bench_tree "fresh/ (4 KiB pages)" "$work/fresh"

weights_bytes=$(stat -c %s "$work/model.safetensors")
best_of t_st "$work/model.safetensors" "$cli" hash "$work/model.safetensors"
best_of t_st_ssl "$work/model.safetensors" openssl dgst -sha256 "$work/model.safetensors"
st_rate=$(mbps "$weights_bytes" "$t_st")
echo "model.safetensors: 1 file, $weights_bytes bytes"
echo "  openssl dgst -sha256 (one file: one process, 1 core against reverify's $cores: not an equal-thread figure): ${t_st_ssl}s  $(mbps "$weights_bytes" "$t_st_ssl") MB/s"
echo "  reverify hash FILE.safetensors:     ${t_st}s  $st_rate MB/s = $(ratio "$st_rate" "$limit") of limit (the equal-thread comparison: limit = openssl speed a core x $cores)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
