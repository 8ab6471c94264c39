#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FlagTree's own distributed tests, run on stock Triton + TLE: which files,
where they come from, and the one edit they get.

The files are FlagTree's (flagos-ai/FlagTree and a fork holding the
delayed-peer barrier test), so they are not in this repository; they live in
an ignored folder, by default .gpu/flagtree-tests/. MANIFEST names each one:
the repository and path it was read from, the stored version, and the
SHA-256 of its text as read. Nothing here downloads anything.

    scripts/flagtree-tests.py fetch --from DIR [--to DIR]   copy the files from DIR (checked)
    scripts/flagtree-tests.py check [DIR]                   are they all there, unchanged?
    scripts/flagtree-tests.py prepare DIR OUT               write the runnable copies to OUT

``prepare`` changes each file in exactly two ways, both reported: the line
``import triton.experimental.tle.language as tle`` becomes ``import
tle.flagtree as tle`` (it must occur once), and assertions that a FlagCX
function name appears in the PTX are removed (TLE inlines its device
functions, so no call remains; docs/flagtree.md). Nothing else is touched.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT / ".gpu" / "flagtree-tests"

#: name -> (repository, path in it, stored version, sha256 of the text).
#: "commit" is the commit the file was read at; two name the stored
#: version they were read from instead (the version whose code matches
#: FlagTree's current API: create_dist_tensor and the require_tle marker).
MANIFEST = {
    "test_tle_d2d_barrier.py": (
        "flagos-ai/FlagTree", "python/test/tle/unit/test_tle_d2d_barrier.py", "stored version 59059728793",
        "13a763880ca97c3a1bead04a0854fd1d41dcc5c7e332e1a522f1961315bb62ee"),
    "test_tle_distributed_d2d.py": (
        "flagos-ai/FlagTree", "python/test/tle/unit/test_tle_distributed_d2d.py",
        "commit bb4a8f84e955f390a9ae437644f98f6c6e7d6c25",
        "073f72bd3320cfedd8a2af66d0865889fbff3a6075a2ed54f93bddce0cbeb458"),
    "test_tle_get_local_pe.py": (
        "flagos-ai/FlagTree", "python/test/tle/unit/test_tle_get_local_pe.py", "stored version 58908874786",
        "66e4a3e250ca852b268650d0d94761a9bca7dcde544d1fcdda157b4acb509db7"),
    "test_tle_get_node_rank.py": (
        "flagos-ai/FlagTree", "python/test/tle/unit/test_tle_get_node_rank.py",
        "commit d83b574bfc1421c8140a1d626cc35c57199e132e",
        "98836d5b6950b92d85d3985bce36b5df9b1938493f7117690142a0df1ad2aac0"),
    "test_tle_shard_id_runtime.py": (
        "flagos-ai/FlagTree", "python/test/tle/unit/test_tle_shard_id_runtime.py",
        "commit 80cedafa07955b382d65b1602d539427139e2f7e",
        "4a6e0dc781e2d8ed9af856ae1e494deb5fb920cd40cda52e9026d07f08a5fea2"),
    "test_tle_distributed_barrier_multi_gpu.py": (
        "henghengxiedaima/FlagTree", "third_party/iluvatar/python/test/unit/tle/"
        "test_tle_distributed_barrier_multi_gpu.py", "commit 1354d99c9bc0e25d50d83b37a6e5dc254552ea0e",
        "9284df6bb574c05f00b32441966d5e336aabc3b1f0e8c3d66cfb1ecd97d37c4c"),
}

FLAGTREE_IMPORT = "import triton.experimental.tle.language as tle"
TLE_IMPORT = "import tle.flagtree as tle"
#: An assertion that a FlagCX function name appears in the PTX, alone on its
#: line: the only kind of line prepare removes.
FLAGCX_PTX_ASSERT = re.compile(r"""^\s*assert\s+["']flagcx\w*["']\s+in\s+compiled\.asm\[["']ptx["']\]\s*$""")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(directory: Path) -> list[str]:
    """Problems with the files in ``directory`` (none: all there, unchanged)."""
    problems = []
    for name, (repo, path, version, sha) in MANIFEST.items():
        file = directory / name
        if not file.is_file():
            problems.append(f"{file}: missing (read {repo}:{path}, {version})")
        elif digest(file) != sha:
            problems.append(f"{file}: its SHA-256 is {digest(file)}, not {sha} ({repo}:{path}, {version})")
    return problems


def prepare(directory: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in MANIFEST:
        lines = (directory / name).read_text().splitlines(keepends=True)
        imports = [i for i, line in enumerate(lines) if line.rstrip("\n") == FLAGTREE_IMPORT]
        if len(imports) != 1:
            raise SystemExit(f"{name}: expected the line {FLAGTREE_IMPORT!r} once, found it {len(imports)} times")
        lines[imports[0]] = TLE_IMPORT + "\n"
        kept = []
        for number, line in enumerate(lines, 1):
            if FLAGCX_PTX_ASSERT.match(line):
                print(f"{name}:{number}: removed {line.strip()}")
            else:
                kept.append(line)
        print(f"{name}:{imports[0] + 1}: {FLAGTREE_IMPORT} -> {TLE_IMPORT}")
        (out / name).write_text("".join(kept))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fetch_p = sub.add_parser("fetch", help="copy the files from a directory that has them")
    fetch_p.add_argument("--from", dest="source", type=Path, required=True)
    fetch_p.add_argument("--to", type=Path, default=DEFAULT_DIR)
    check_p = sub.add_parser("check", help="check the files against the manifest")
    check_p.add_argument("dir", type=Path, nargs="?", default=DEFAULT_DIR)
    prepare_p = sub.add_parser("prepare", help="write the runnable copies")
    prepare_p.add_argument("dir", type=Path)
    prepare_p.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "fetch":
        problems = check(args.source)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        args.to.mkdir(parents=True, exist_ok=True)
        for name in MANIFEST:
            shutil.copyfile(args.source / name, args.to / name)
        print(f"{len(MANIFEST)} files in {args.to}")
        return 0
    if args.command == "check":
        problems = check(args.dir)
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print(f"{len(MANIFEST)} files in {args.dir}, as listed")
        return 1 if problems else 0
    problems = check(args.dir)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    prepare(args.dir, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
