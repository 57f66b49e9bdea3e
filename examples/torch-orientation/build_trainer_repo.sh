#!/usr/bin/env bash
# Builds the PyTorch example's trainer git repository from examples/torch-orientation/trainer/
# with fixed author, committer and dates, so its commit hash is the same on every machine.
# Usage: build_trainer_repo.sh DEST [PATCH]
#   PATCH (optional): applied on top as a second commit (a variant trainer).
# Prints the commit hash of HEAD.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="$1"
patch="${2:-}"
export GIT_AUTHOR_NAME="reverify example" GIT_AUTHOR_EMAIL="example@reverify.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-11-01T00:00:00Z" GIT_COMMITTER_DATE="2026-11-01T00:00:00Z"
export GIT_CONFIG_NOSYSTEM=1 HOME="${TMPDIR:-/tmp}"  # no user or system git config leaks in
files=(train.py reverify_contract.py config.json seeds.json requirements.lock)
rm -rf "$dest"
mkdir -p "$dest"
git -C "$dest" init --quiet --initial-branch=main
for f in "${files[@]}"; do
  install -m 0644 "$here/trainer/$f" "$dest/$f"
done
git -C "$dest" add "${files[@]}"
git -C "$dest" -c commit.gpgsign=false commit --quiet -m "digit-orientation-cnn trainer"
if [[ -n "$patch" ]]; then
  export GIT_AUTHOR_DATE="2026-11-15T00:00:00Z" GIT_COMMITTER_DATE="2026-11-15T00:00:00Z"
  git -C "$dest" apply "$patch"
  git -C "$dest" -c commit.gpgsign=false commit --quiet -am "variant: $(basename "$patch" .patch)"
fi
git -C "$dest" rev-parse HEAD
