#!/usr/bin/env bash
# The PyTorch example's trainer (examples/torch-orientation/trainer/) as a git repository with a
# fixed commit hash. Usage: build_trainer_repo.sh DEST [PATCH]
#   PATCH (optional): applied on top as a second commit (a variant trainer).
# Prints the commit hash of HEAD. See ../build_trainer_repo.sh.
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../build_trainer_repo.sh" "$here/trainer" digit-orientation-cnn "$@"
