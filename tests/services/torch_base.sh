#!/usr/bin/env bash
# torch_base.sh: prints the path of the PyTorch trainer root file system: python3, numpy and
# python3-torch with every package they depend on, copied from this machine's installed files
# (lib.sh host_rootfs; about 1.1 GB). Seconds where it is cached ($REVERIFY_CACHE_DIR, default
# /var/cache/reverify-tests), under a minute from a cold page cache otherwise: building it with
# mmdebstrap instead downloaded and unpacked every package, 6-10 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ensure_packages python3-minimal python3-numpy python3-torch
host_rootfs python3-minimal python3-numpy python3-torch
