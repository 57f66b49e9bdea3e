#!/usr/bin/env bash
# The gate endpoint under load, against nginx serving the same JSON as a static file, in the
# same run on the same machine: `wrk -t2 -c64 -d10s` each (Debian's nginx-light and wrk, both on
# 127.0.0.1, nginx with a config of our own, stopped by pid), in GATE_BENCH_ROUNDS (3) rounds that
# alternate them, so a shared machine's slow spell falls on all. Two nginx configs run in every
# round: "tuned", the fair baseline the target is measured against (keepalive_requests above the
# run's request count, so wrk never reconnects to nginx when it never does to reverifyd, and
# open_file_cache, so nginx does not open and stat the file per request), and "default" (Debian's
# defaults: keepalive_requests 1000, no open_file_cache), the baseline of figures before
# 2026-12-05, printed beside it. nginx runs one worker per core (worker_processes auto) and
# reverifyd one API thread per core: equal thread counts. Prints the CPU model, each
# round's requests/s and p99, and the median of the rounds' ratios. Targets (docs/benchmarks.md "Targets"):
# reverifyd >= 1.0x nginx's requests/s, p99 <= 2x nginx's p99.
# Usage: [NGINX_WORKERS=auto|N] [GATE_BENCH_ROUNDS=N] bench/gate_bench.sh [BUILD_DIR]
#        (default build/release; release preset)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
for bin in "$build/daemon/reverifyd" "$build/bench/gate_bench_seed"; do
  [[ -x $bin ]] || { echo "missing $bin: cmake --preset release && cmake --build build/release"; exit 2; }
done
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 0.2; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$build/bench/gate_bench_seed" "$tmp/state"
port=$(free_port)
# reverifyd needs a source; an empty one leaves the seeded versions (source "bench") as they are.
mkdir -p "$tmp/empty-registry"
cat > "$tmp/reverify.yaml" <<YAML
state_dir: state
sources: [{name: empty, kind: directory, root: empty-registry}]
api: {port: $port}
YAML
"$build/daemon/reverifyd" --config "$tmp/reverify.yaml" 2> "$tmp/reverifyd.log" &
pids+=($!)
path="/v1/gate/digits-mlp/2026.11.1?max_age=40d"
for _ in $(seq 100); do
  code=$(curl -s -o "$tmp/gate.json" -w '%{http_code}' "http://127.0.0.1:$port$path" || true)
  [[ $code == 200 ]] && break
  sleep 0.1
done
[[ $code == 200 ]] || { echo "gate did not answer 200 (got $code)"; cat "$tmp/reverifyd.log"; exit 1; }

mkdir -p "$tmp/www" "$tmp/nginx"
cp "$tmp/gate.json" "$tmp/www/gate.json"
# nginx_conf NAME PORT EXTRA_HTTP_DIRECTIVES: one nginx config serving $tmp/www.
nginx_conf() {
  cat > "$tmp/nginx-$1.conf" <<NGINX
worker_processes ${NGINX_WORKERS:-auto};
pid $tmp/nginx-$1/nginx.pid;
error_log $tmp/nginx-$1/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx-$1; proxy_temp_path $tmp/nginx-$1; fastcgi_temp_path $tmp/nginx-$1;
  uwsgi_temp_path $tmp/nginx-$1; scgi_temp_path $tmp/nginx-$1;
  $3
  server {
    listen 127.0.0.1:$2;
    location / { root $tmp/www; default_type application/json; }
  }
}
NGINX
  mkdir -p "$tmp/nginx-$1"
  nginx -c "$tmp/nginx-$1.conf" -g 'daemon off;' &
  pids+=($!)
}
tuned_port=$(free_port)
nginx_conf tuned "$tuned_port" "keepalive_requests 1000000000; keepalive_timeout 300s; open_file_cache max=64 inactive=600s; open_file_cache_valid 600s;"
default_port=$(free_port)
nginx_conf default "$default_port" ""
# nginx's workers run as an unprivileged user: they need to read the file (mktemp -d is 0700).
chmod 0755 "$tmp" "$tmp/www"
chmod 0644 "$tmp/www/gate.json"
for nport in "$tuned_port" "$default_port"; do
  ok=
  for _ in $(seq 50); do curl -sf -o "$tmp/nginx.json" "http://127.0.0.1:$nport/gate.json" && { ok=1; break; }; sleep 0.1; done
  [[ -n $ok ]] || { echo "nginx did not serve gate.json on $nport"; cat "$tmp"/nginx-*/error.log; exit 1; }
  cmp -s "$tmp/nginx.json" "$tmp/gate.json" || { echo "nginx serves a different body"; exit 1; }
done

run_wrk() {  # URL -> "req_per_s p99_ms non_2xx_responses"
  local out
  out=$(wrk -t2 -c64 -d10s --latency "$1")
  echo "$out" >&2
  local rps p99
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<<"$out")
  echo "$rps $p99 $(awk '/Non-2xx/ {print $NF}' <<<"$out")"
}
rounds=${GATE_BENCH_ROUNDS:-3}
echo "machine: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
figures=()
for round in $(seq "$rounds"); do
  echo "== round $round: nginx tuned (static file, worker_processes ${NGINX_WORKERS:-auto}) ==" >&2
  read -r tuned_rps tuned_p99 tuned_bad < <(run_wrk "http://127.0.0.1:$tuned_port/gate.json")
  echo "== round $round: reverifyd gate ==" >&2
  read -r rv_rps rv_p99 rv_bad < <(run_wrk "http://127.0.0.1:$port$path")
  echo "== round $round: nginx default config ==" >&2
  read -r default_rps default_p99 default_bad < <(run_wrk "http://127.0.0.1:$default_port/gate.json")
  # A server answering errors fast is no baseline: every response must have been a 200.
  [[ -z $tuned_bad && -z $rv_bad && -z $default_bad ]] ||
    { echo "non-2xx responses: nginx ${tuned_bad:-0}/${default_bad:-0}, reverifyd ${rv_bad:-0}"; exit 1; }
  figures+=("$tuned_rps" "$tuned_p99" "$rv_rps" "$rv_p99" "$default_rps" "$default_p99")
done
/usr/bin/python3 - "${figures[@]}" <<'PY'
import statistics, sys
values = list(map(float, sys.argv[1:]))
rounds = [values[i:i + 6] for i in range(0, len(values), 6)]
for i, (t_rps, t_p99, r_rps, r_p99, d_rps, d_p99) in enumerate(rounds, 1):
    print(f"round {i}: reverifyd {r_rps:,.0f} req/s, p99 {r_p99:.3f} ms; nginx tuned {t_rps:,.0f} req/s, "
          f"p99 {t_p99:.3f} ms (ratio {r_rps / t_rps:.2f}, p99 {r_p99 / t_p99:.2f}); nginx default "
          f"{d_rps:,.0f} req/s, p99 {d_p99:.3f} ms (ratio {r_rps / d_rps:.2f}, p99 {r_p99 / d_p99:.2f})")
for name, col_rps, col_p99 in (("tuned", 0, 1), ("default", 4, 5)):
    rps = statistics.median(r[2] / r[col_rps] for r in rounds)
    p99 = statistics.median(r[3] / r[col_p99] for r in rounds)
    target = " (target >= 1.00, p99 <= 2.00)" if name == "tuned" else " (the earlier, unfair baseline)"
    print(f"median ratio reverifyd/nginx {name}: req/s {rps:.2f}, p99 {p99:.2f}{target}")
PY
