#!/usr/bin/env bash
# `reverify check-job` on an example's trainer as it is released (its build_trainer_repo.sh: the
# trainer and the job kit, one commit), with the example's data, config, seeds, environment and
# scoring spec: no check fails. Usage: check_job_example.sh digits|torch-orientation
set -euo pipefail
example="$1"
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
"$src/examples/$example/build_trainer_repo.sh" "$t/trainer" >/dev/null
case "$example" in
  digits)
    scoring=(--task multiclass --labels label --classes 10 --segment-key digit=label)
    env=(--env OMP_NUM_THREADS=1 --env OPENBLAS_NUM_THREADS=1 --env PYTHONHASHSEED=0) ;;
  torch-orientation)
    # An eval record is an eval image at one of 4 turns (file order, then turn order).
    /usr/bin/python3 - "$src/examples/digits/eval/digits-eval.csv" "$t/records.csv" <<'PY'
import sys
rows = [line.split(",")[1] for line in open(sys.argv[1]).read().splitlines()[1:]]
with open(sys.argv[2], "w") as out:
    out.write("turn,digit\n")
    out.writelines(f"{turn},{digit}\n" for digit in rows for turn in range(4))
PY
    scoring=(--task multiclass --labels "$t/records.csv:turn" --classes 4)
    env=(--env PYTHONHASHSEED=0 --env CUBLAS_WORKSPACE_CONFIG=:4096:8) ;;
  *) echo "unknown example $example" >&2; exit 2 ;;
esac
status=0
(cd "$t/trainer" && "$cli" check-job --work-dir "$t/work" --level bitwise \
  --data "$src/examples/digits/data" --eval "$src/examples/digits/eval/digits-eval.csv" \
  --config config.json --seeds seeds.json "${env[@]}" "${scoring[@]}" \
  -- python3 train.py) | tee "$t/report.txt" || status=$?
[[ "$status" == 0 ]] || { echo "FAIL: check-job failed the $example trainer (exit $status)" >&2; exit 1; }
grep -q "^PASS  subsample: " "$t/report.txt" || { echo "FAIL: subsample not checked" >&2; exit 1; }
grep -q "^PASS  metrics: " "$t/report.txt" || { echo "FAIL: metrics not checked" >&2; exit 1; }
grep -q "^PASS  inputs: " "$t/report.txt" || { echo "FAIL: inputs not traced" >&2; exit 1; }
echo "check-job passes the $example trainer"
