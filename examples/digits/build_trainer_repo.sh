#!/usr/bin/env bash
# The example trainer (examples/digits/trainer/) as a git repository with a fixed commit hash
# (the released manifest records it). Usage: build_trainer_repo.sh DEST [PATCH]
#   PATCH (optional): applied on top as a second commit (the demo's variant trainer).
# Prints the commit hash of HEAD. See ../build_trainer_repo.sh.
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../build_trainer_repo.sh" "$here/trainer" digits-mlp "$@"
