#!/usr/bin/env bash
# Benchmark of `reverify hash` against named baselines, in one run (issue 2, "Benchmark"):
#   - a ~2 GiB corpus of ~2000 files of mixed sizes: reverify vs `find | sort | xargs sha256sum`;
#   - a single ~2 GiB safetensors file (tensor hash, parallel over tensors);
#   - the limit: `openssl speed -evp sha256` 16 KiB row x cores.
# Every timed run starts with the data re-read into the page cache; each tool's best of 3 runs
# counts (the machine is shared). The corpus lives in a temp folder outside the repo, removed at exit.
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

/usr/bin/python3 bench/hash_bench_data.py "$work"
mkdir "$work/empty"
corpus_bytes=$(du -sb --apparent-size "$work/corpus" | cut -f1)
corpus_files=$(find "$work/corpus" -type f | wc -l)
weights_bytes=$(stat -c %s "$work/model.safetensors")

# Before each timed run the data is read again (`cat`), so it is all in the page cache, in the
# folios the generator's writes left (large ones here: it writes in large chunks).
# HASH_BENCH_WARM=reread drops the page cache first (root only), so the runs find it as a read from
# disk leaves it instead: 2 MiB folios only where read-ahead has ramped up, which costs the
# mapping more kernel work for a corpus of small and middle-sized files.
warm_mode=${HASH_BENCH_WARM:-cached}
if [[ $warm_mode == reread && ! -w /proc/sys/vm/drop_caches ]]; then
  echo "note: cannot drop the page cache (not root): warming only re-reads cached data" >&2
  warm_mode=cached
fi
warm() {
  if [[ $warm_mode == reread ]]; then
    sync
    echo 1 >/proc/sys/vm/drop_caches
  fi
  find "$1" -type f -exec cat {} + >/dev/null
  # Dropping the cache also dropped the programs and their libraries: load them again, so no
  # timed run pays for reading reverify, libcurl or sha256sum from disk (~50 ms for reverify).
  "$cli" hash "$work/empty" >/dev/null
  sha256sum /dev/null >/dev/null
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

sha256sum_corpus() { (cd "$work/corpus" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum); }

# The limit first, while nothing of ours runs.
openssl_core=$(openssl speed -evp sha256 -bytes 16384 -seconds 3 2>/dev/null |
  awk '/^sha256/ { sub(/k$/, "", $2); printf "%.0f", $2 * 1000 / 1e6 }')
limit=$((openssl_core * cores))

best_of t_sum "$work/corpus" sha256sum_corpus
cp "$work/out" "$work/sha256sum.out"
best_of t_rev "$work/corpus" "$cli" hash "$work/corpus"
# Cross-check: reverify's manifest lines carry the same digests as sha256sum's.
head -n -1 "$work/out" | awk '{ print $1 "  " substr($0, index($0, $3)) }' |
  cmp -s - "$work/sha256sum.out" || { echo "MISMATCH between reverify and sha256sum digests" >&2; exit 1; }
best_of t_st "$work/model.safetensors" "$cli" hash "$work/model.safetensors"

# CPU-time rates: `openssl speed` counts CPU time too, so on a loaded (shared) machine these are
# the fair comparison with the limit; wall-clock rates there mostly measure the other load.
cpu_seconds() {
  warm "$1"
  shift
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null 2>&1
  awk '{ printf "%.4f", $1 + $2 }' "$work/time"
}
c_rev=$(cpu_seconds "$work/corpus" "$cli" hash "$work/corpus")
c_st=$(cpu_seconds "$work/model.safetensors" "$cli" hash "$work/model.safetensors")
# /usr/bin/time needs a program, not a shell function: the same pipeline under bash -c.
c_sum=$(cpu_seconds "$work/corpus" bash -c "$(declare -f sha256sum_corpus); work='$work' sha256sum_corpus")

sum_rate=$(mbps "$corpus_bytes" "$t_sum")
rev_rate=$(mbps "$corpus_bytes" "$t_rev")
st_rate=$(mbps "$weights_bytes" "$t_st")
echo "machine: $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg); page cache warmed by: $warm_mode"
echo "limit (openssl speed -evp sha256, 16 KiB row): $openssl_core MB/s a core x $cores = $limit MB/s"
echo "corpus: $corpus_files files, $corpus_bytes bytes"
echo "  sha256sum (find|sort|xargs sha256sum): ${t_sum}s  $sum_rate MB/s"
echo "  reverify hash DIR:                      ${t_rev}s  $rev_rate MB/s  = $(ratio "$rev_rate" "$limit") of limit (target 0.85), $(ratio "$rev_rate" "$sum_rate")x sha256sum"
echo "safetensors: 1 file, $weights_bytes bytes"
echo "  reverify hash FILE.safetensors:         ${t_st}s  $st_rate MB/s  = $(ratio "$st_rate" "$limit") of limit (target 0.80)"
echo "CPU time (user+sys), against the limit of $openssl_core MB/s per core:"
echo "  sha256sum:             ${c_sum}s  $(mbps "$corpus_bytes" "$c_sum") MB/s a core"
echo "  reverify hash DIR:     ${c_rev}s  $(mbps "$corpus_bytes" "$c_rev") MB/s a core = $(ratio "$(mbps "$corpus_bytes" "$c_rev")" "$openssl_core") of limit"
echo "  reverify safetensors:  ${c_st}s  $(mbps "$weights_bytes" "$c_st") MB/s a core = $(ratio "$(mbps "$weights_bytes" "$c_st")" "$openssl_core") of limit"
