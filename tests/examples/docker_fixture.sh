# Sourced by the example tests that rebuild through the docker runner (example_docker.sh,
# torch_docker.sh) once they have set $src (the source tree) and $t (their temporary folder).
# Uses the private dockerd + registry of the CTest fixture `docker`
# ($REVERIFY_SERVICES_DIR/docker.env) or, run by hand without it, starts its own in $t/services
# (tests/services/docker_up.sh) and stops it on exit. Sets the EXIT trap (stops those services,
# removes $t), fail(), docker.env's variables (DOCKER_SOCK, REGISTRY, BASE_IMAGE), DOCKER_HOST
# for the docker CLI, and writes $t/docker.yaml: a reverify config with the docker runner on that
# socket (network none) and its store in $t/state.
svc="${REVERIFY_SERVICES_DIR:-}"
own_services=0
if [[ -z "$svc" || ! -s "$svc/docker.env" ]]; then
  svc="$t/services"
  own_services=1
fi
cleanup() {
  ((own_services == 0)) || bash "$src/tests/services/docker_down.sh" "$svc" >/dev/null 2>&1 || true
  rm -rf "$t"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

((own_services == 0)) || bash "$src/tests/services/docker_up.sh" "$svc" >/dev/null
# shellcheck disable=SC1091
source "$svc/docker.env"
export DOCKER_HOST="unix://$DOCKER_SOCK"
cat >"$t/docker.yaml" <<YAML
state_dir: $t/state
runner:
  kind: docker
  docker: {socket: $DOCKER_SOCK, network_mode: none}
YAML
