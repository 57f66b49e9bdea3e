#!/usr/bin/python3
"""rootfs_from_host.py OUT.tar PACKAGE... | --key PACKAGE...: a root file system tar of PACKAGES and every package they
depend on, taken from what this machine already has installed (dpkg's file lists), for `docker
import`. The test images need an interpreter with numpy or torch, not a bootable Debian: copying
the installed files costs seconds where mmdebstrap downloads and unpacks every package (minutes
for python3-torch). Every dependency must be installed here (scripts/setup.sh installs them); a
missing one is an error naming it.

What goes in: PACKAGES and Debian's required packages (the Essential set, awk and the rest of
what a minimal Debian holds: the shell tools a job may call), each package's files (directories, regular files and symlinks, as dpkg lists them),
the symlink chains they lead through (update-alternatives' /etc/alternatives hops included), the
symlinks in the program and library folders that point into what is included (alternatives such
as awk or libblas.so.3, which no package lists), the merged-/usr links (/bin -> usr/bin ...) and an empty
/tmp. Owners are root; modes and times are the host's.

--key prints a digest of what the tar would hold (the closure's packages and versions, and this
script), for a cache to name the tar by."""
import hashlib
import os
import re
import stat
import subprocess
import sys
import tarfile

LINK_DIRS = ["/usr/bin", "/usr/sbin", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
MERGED_USR = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]


def package_table():
    """Every installed package -> (Provides, Pre-Depends + Depends, Version, required), from one
    dpkg-query call; required: Essential, or of Priority required."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Provides}\t"
                          "${Pre-Depends},${Depends}\t${Version}\t${Essential}${Priority}\n"],
                         capture_output=True, text=True, check=True).stdout
    table = {}
    for line in out.splitlines():
        name, status, provides, depends, version, required = line.split("\t")
        if status.endswith("install ok installed"):
            table[name] = (provides, depends, version, required in ("yesrequired", "required", "yes"))
    return table


def bare(item):
    """"libc6:amd64 (>= 2.36)" -> "libc6"."""
    return re.sub(r"\s*\(.*\)", "", item).strip().split(":")[0]


def closure(roots):
    table = package_table()
    provided = {}
    for name, (provides, _, _, _) in table.items():
        for item in provides.split(","):
            if bare(item):
                provided.setdefault(bare(item), []).append(name)
    required = [name for name, row in table.items() if row[3]]
    seen, stack = set(), [bare(r) for r in roots] + required
    while stack:
        package = stack.pop()
        if package in seen:
            continue
        if package not in table:
            if package not in provided:
                sys.exit(f"rootfs_from_host: {package} is not installed here (scripts/setup.sh installs it)")
            stack.append(provided[package][0])
            continue
        seen.add(package)
        for alternatives in table[package][1].split(","):
            choices = [bare(c) for c in alternatives.split("|") if bare(c)]
            if choices:
                stack.append(next((c for c in choices if c in table or c in provided), choices[0]))
    return {package: table[package][2] for package in sorted(seen)}


def listed_paths(packages):
    """dpkg's file lists, read where dpkg keeps them (one `dpkg -L` per package is much slower)."""
    info, paths = "/var/lib/dpkg/info", set()
    for package in packages:
        lists = [f for f in (f"{info}/{package}.list", *(f"{info}/{package}:{arch}.list"
                 for arch in ("amd64", "arm64", "all")))
                 if os.path.exists(f)]
        if not lists:
            sys.exit(f"rootfs_from_host: no file list for {package} in {info}")
        for listing in lists:
            with open(listing) as f:
                paths.update(p for p in f.read().splitlines() if p.startswith("/") and p != "/.")
    return paths


def real(path):
    """The path with its parent folders' symlinks resolved (merged /usr), the last part kept."""
    parent, name = os.path.split(path)
    return os.path.join(os.path.realpath(parent), name)


def with_link_chains(paths):
    """Adds every hop of every symlink chain, so a link never dangles in the image."""
    out, stack = set(), [real(p) for p in paths if os.path.lexists(p)]
    while stack:
        path = stack.pop()
        if path in out or not os.path.lexists(path):
            continue
        out.add(path)
        if os.path.islink(path):
            target = os.readlink(path)
            stack.append(real(os.path.normpath(os.path.join(os.path.dirname(path), target))))
    return out


def alternative_links(included):
    """Symlinks in the program and library folders, listed by no package, that resolve into the
    image."""
    links = set()
    for folder in LINK_DIRS:
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            if entry.is_symlink() and os.path.realpath(entry.path) in included:
                links.add(entry.path)
    return links


def write_tar(out, paths):
    def root_owned(info):
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    partial = out + ".partial"
    with tarfile.open(partial, "w", format=tarfile.GNU_FORMAT) as tar:
        for name in MERGED_USR:
            if os.path.islink("/" + name):
                info = tarfile.TarInfo(name)
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, os.readlink("/" + name), 0o777
                tar.addfile(root_owned(info))
        tmp = tarfile.TarInfo("tmp")
        tmp.type, tmp.mode = tarfile.DIRTYPE, 0o1777
        tar.addfile(root_owned(tmp))
        folders = set()
        for path in sorted(paths):
            parent = os.path.dirname(path)
            while parent not in ("/", "") and parent not in folders:  # parents before children
                folders.add(parent)
                parent = os.path.dirname(parent)
        for path in sorted((folders | paths) - {"/tmp"}):
            mode = os.lstat(path).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                continue
            tar.add(path, arcname=path.lstrip("/"), recursive=False, filter=root_owned)
    os.replace(partial, out)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: rootfs_from_host.py OUT.tar PACKAGE... | --key PACKAGE...")
    packages = closure(sys.argv[2:])
    if sys.argv[1] == "--key":
        digest = hashlib.sha256(open(__file__, "rb").read())
        digest.update("".join(f"{p} {v}\n" for p, v in packages.items()).encode())
        print(digest.hexdigest()[:16])
        return
    paths = with_link_chains(listed_paths(packages))
    paths |= with_link_chains(alternative_links(paths))
    write_tar(sys.argv[1], {p for p in paths if p not in ("/" + n for n in MERGED_USR)})
    print(f"rootfs_from_host: {len(packages)} packages, {len(paths)} paths -> {sys.argv[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
