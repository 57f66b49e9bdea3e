#!/usr/bin/env bash
# The example digits-mlp verified through the `docker` runner: the private dockerd + registry of
# the CTest fixture `docker` ($REVERIFY_SERVICES_DIR/docker.env), or, run by hand without it, its
# own (tests/services/docker_up.sh); an image = the python3/numpy base (copied from the installed packages) + the example
# trainer and the job kit at /src, pushed and pulled by digest. The release is made by release.sh with that image
# recorded (IMAGE=...); `reverify run --runner docker` must then rebuild it inside a container
# (network none, read-only data and eval binds) and reach `passed`.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
# shellcheck source=tests/examples/docker_fixture.sh
source "$src/tests/examples/docker_fixture.sh"

mkdir -p "$t/context"
cp "$src"/examples/digits/trainer/{train.py,config.json,seeds.json,requirements.lock} "$t/context/"
cp "$src/python/reverify_job.py" "$t/context/"  # the job kit, beside the trainer as in its repository
cat >"$t/context/Dockerfile" <<'DOCKERFILE'
ARG BASE
FROM ${BASE}
COPY train.py config.json seeds.json requirements.lock reverify_job.py /src/
WORKDIR /src
DOCKERFILE
tag="$REGISTRY/digits-trainer:test"
DOCKER_BUILDKIT=0 docker build -q --network none --build-arg "BASE=$BASE_IMAGE" -t "$tag" \
  "$t/context" >/dev/null
docker push -q "$tag" >/dev/null
image="$(docker inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$tag" |
  grep -m1 "^$REGISTRY/digits-trainer@")"
docker rmi "$tag" >/dev/null  # the runner must pull it by digest
echo "trainer image: $image"

IMAGE="$image" TRAINER_REPO="$t/trainer" \
  "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null
grep -q "\"image\": \"$image\"" "$t/registry/digits-mlp/2026.11.1/manifest.json" ||
  fail "the release does not record the image"

status=0
"$cli" run digits-mlp@2026.11.1 --config "$t/docker.yaml" --registry "$t/registry" \
  >"$t/report.txt" 2>&1 || status=$?
cat "$t/report.txt"
[[ "$status" == 0 ]] || fail "expected passed (exit 0), got exit $status"
grep -q "docker runner" "$t/report.txt" || fail "not run by the docker runner"
grep -Eq "PASS +primary:accuracy" "$t/report.txt" || fail "primary check missing"
echo "the example passed through the docker runner"
