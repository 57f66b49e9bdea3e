#!/bin/sh
# Builds the manifest parser fuzzer with clang 14 (libFuzzer + ASan + UBSan) in build/fuzz and
# runs it for the given number of seconds (default 60), seeded with the test fixtures.
#   fuzz/run.sh [seconds]
# The parser needs no Boost.Asio or libcurl, so the few sources it uses are compiled directly
# rather than through the main CMake build (clang 14 cannot build the Asio coroutine code).
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/fuzz"
mkdir -p "$out/corpus"
cp "$root"/tests/core/manifests/*.json "$out/corpus/"

sources="fuzz/manifest_fuzz.cpp core/manifest_parse.cpp core/manifest_fields.cpp
  core/manifest_strict_json.cpp core/manifest_path.cpp core/manifest_json.cpp core/names.cpp
  core/result.cpp policies/lint.cpp policies/manifest_diff.cpp"
binary="$out/manifest_fuzz"
newest=$(cd "$root" && ls -t $sources core/*.hpp policies/*.hpp | head -n 1)
if [ ! -x "$binary" ] || [ "$root/$newest" -nt "$binary" ]; then
  (cd "$root" && clang++-14 -std=c++20 -g -O1 -I. \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    $sources -o "$binary")
fi
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exec "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "$out/corpus"
