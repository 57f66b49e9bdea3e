#!/usr/bin/env bash
# docker_up.sh OUT_DIR: the Docker test services, as a CTest FIXTURES_SETUP (tests/runners/tests.cmake).
# Starts a private engine and a registry on a free 127.0.0.1 port under a temp folder, builds the
# trainer image (python3 and numpy as this machine has them installed, cached outside the checkout, plus
# tests/runners/fixtures/trainer.py and hostile_job.py), pushes it and writes the coordinates other
# tests read:
#   OUT_DIR/docker.env: DOCKER_SOCK=...  REGISTRY=127.0.0.1:PORT  TRAINER_IMAGE=name@sha256:...
#                       BASE_IMAGE=name@sha256:...  DOCKER_TMP=<temp folder, for docker_down.sh>
# The pushed images are removed from the engine again, so tests really pull them by digest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: docker_up.sh OUT_DIR}
mkdir -p "$out"
[[ ! -e $out/docker.env ]] || bash "$here/docker_down.sh" "$out"
ensure_packages docker.io docker-registry curl python3-numpy

t=$(mktemp -d /tmp/reverify-docker.XXXXXX)
echo "DOCKER_TMP=$t" >"$out/docker.env"  # lets docker_down.sh clean up even if we fail below
bash "$here/dockerd_start.sh" "$t/engine"
export DOCKER_HOST=unix://$t/engine/docker.sock

port=$(free_port)
registry=127.0.0.1:$port
cat >"$t/registry.yml" <<YML
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $t/regdata}}
http: {addr: $registry}
YML
setsid docker-registry serve "$t/registry.yml" >"$t/registry.log" 2>&1 </dev/null &
echo $! >"$t/registry.pid"
wait_until 30 curl -sf "http://$registry/v2/" || { cat "$t/registry.log" >&2; exit 1; }

# The base root file system: python3 and numpy as installed here (seconds; cached).
base_tar=$(host_rootfs python3-minimal python3-numpy)

digest_of() { docker inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$1" | grep -m1 "^${1%:*}@"; }

docker import "$base_tar" "$registry/reverify-base:test" >/dev/null
docker push -q "$registry/reverify-base:test" >/dev/null
base_image=$(digest_of "$registry/reverify-base:test")

# The legacy builder needs no network for COPY; BuildKit is not installed with docker.io.
DOCKER_BUILDKIT=0 docker build -q --network none --build-arg "BASE=$base_image" \
  -f "$here/trainer.Dockerfile" -t "$registry/reverify-trainer:test" "$here/../runners/fixtures" \
  >"$t/build.log" 2>&1 || { cat "$t/build.log" >&2; exit 1; }
docker push -q "$registry/reverify-trainer:test" >/dev/null
trainer_image=$(digest_of "$registry/reverify-trainer:test")
# Untagging deletes both images (their digest references go with them).
docker rmi "$registry/reverify-trainer:test" "$registry/reverify-base:test" >/dev/null

cat >"$out/docker.env" <<ENV
DOCKER_TMP=$t
DOCKER_SOCK=$t/engine/docker.sock
REGISTRY=$registry
BASE_IMAGE=$base_image
TRAINER_IMAGE=$trainer_image
ENV
cat "$out/docker.env"
