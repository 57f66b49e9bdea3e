#!/usr/bin/env bash
# Builds an example trainer's git repository from its folder with fixed author, committer and
# dates, so its commit hash is the same on every machine (the released manifest records it).
# Usage: build_trainer_repo.sh TRAINER_DIR NAME DEST [PATCH]
#   TRAINER_DIR  every regular file at its top (mode 0644) is committed as "NAME trainer", with
#                the job kit (python/reverify_job.py) copied beside them, as a pipeline copies it
#   PATCH        (optional) applied on top as a second commit (a variant trainer)
# Prints the commit hash of HEAD. Each example's own build_trainer_repo.sh calls this.
set -euo pipefail
trainer="$1" name="$2" dest="$3" patch="${4:-}"
export GIT_AUTHOR_NAME="reverify example" GIT_AUTHOR_EMAIL="example@reverify.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-11-01T00:00:00Z" GIT_COMMITTER_DATE="2026-11-01T00:00:00Z"
export GIT_CONFIG_NOSYSTEM=1 HOME="${TMPDIR:-/tmp}"  # no user or system git config leaks in
rm -rf "$dest"
mkdir -p "$dest"
git -C "$dest" init --quiet --initial-branch=main
find "$trainer" -maxdepth 1 -type f ! -name '.*' -exec install -m 0644 -t "$dest" {} +
install -m 0644 "$(dirname "$0")/../python/reverify_job.py" "$dest/"
git -C "$dest" add --all
git -C "$dest" -c commit.gpgsign=false commit --quiet -m "$name trainer"
if [[ -n "$patch" ]]; then
  export GIT_AUTHOR_DATE="2026-11-15T00:00:00Z" GIT_COMMITTER_DATE="2026-11-15T00:00:00Z"
  git -C "$dest" apply "$patch"
  git -C "$dest" -c commit.gpgsign=false commit --quiet -am "variant: $(basename "$patch" .patch)"
fi
git -C "$dest" rev-parse HEAD
