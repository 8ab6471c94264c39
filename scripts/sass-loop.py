#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Lists the SASS of a kernel's loop of barriers, to compare what one round
costs in the C++ session, tlec's loop and Triton's (issue 36).

The input is PTX (compiled with ptxas for --arch) or a cubin; the loop is
the widest backward branch of the kernel whose body holds a BAR. The
listing gives the loop's instructions with a class each (load, store,
barrier, fence, branch, yield, call); with --take, it also walks one path
through the loop from its head, falling through every conditional branch
but those listed (the addresses of the branches that path takes, e.g. a
trace pointer's null test) and stopping at the back edge, and counts that
path's instructions by class: what a round costs when the first poll
succeeds.

    scripts/sass-loop.py FILE.ptx|FILE.cubin [--kernel NAME] [--take 0x1a0,0x2f0]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CUDA_BIN = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda-13.0")) / "bin"
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"Function : (\S+)")


def tool(name: str) -> str:
    """ptxas or cuobjdump: the toolkit's, else one on PATH or beside Triton."""
    for cand in (os.environ.get(name.upper(), ""), str(CUDA_BIN / name), shutil.which(name) or ""):
        if cand and Path(cand).is_file():
            return cand
    try:
        import triton  # noqa: PLC0415

        cand = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
        if cand.is_file():
            return str(cand)
    except ImportError:
        pass
    raise SystemExit(f"sass-loop: no {name} (set {name.upper()})")


def disassemble(path: Path, arch: str) -> dict[str, list[tuple[int, str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        cubin = path
        if path.suffix == ".ptx":
            cubin = Path(tmp) / "k.cubin"
            # Triton's PTX targets sm_90a, which ptxas compiles only as such.
            m = re.search(r"^\.target\s+(sm_\w+)", path.read_text(), re.M)
            arch = m[1] if m else arch
            subprocess.run([tool("ptxas"), f"-arch={arch}", "-o", str(cubin), str(path)], check=True)
        text = subprocess.run([tool("cuobjdump"), "-sass", str(cubin)], check=True, capture_output=True,
                              text=True).stdout
    funcs: dict[str, list[tuple[int, str]]] = {}
    cur = None
    for line in text.splitlines():
        m = FUNC.search(line)
        if m:
            cur = funcs.setdefault(m[1], [])
            continue
        m = INSN.search(line)
        if m and cur is not None:
            cur.append((int(m[1], 16), m[2]))
    return funcs


def klass(op: str) -> str:
    o = op.split()[1] if op.startswith("@") else op.split()[0]
    if o.startswith(("LDG", "LD.", "LDC", "ULDC", "LDS", "LDL", "ATOMG", "ATOM", "RED")):
        return "load" if o.startswith(("LD", "ULDC")) else "atomic"
    if o.startswith(("STG", "ST.", "STS", "STL")):
        return "store"
    if o.startswith(("BAR", "B2R")):
        return "barrier"
    if o.startswith(("MEMBAR", "ERRBAR", "CGAERRBAR", "CCTL", "FENCE")):
        return "fence"
    if o.startswith(("BRA", "BRX", "JMP", "EXIT", "RET")):
        return "branch"
    if o.startswith("CALL"):
        return "call"
    if o.startswith("YIELD"):
        return "yield"
    if o.startswith(("BSSY", "BSYNC", "WARPSYNC", "BMOV")):
        return "converge"
    return "alu"


def target(op: str) -> int | None:
    m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)\s*$", op)
    return int(m[1], 16) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--kernel")
    ap.add_argument("--arch", default="sm_90", help="for PTX without a .target")
    ap.add_argument("--take", default="", help="addresses of the conditional branches the walked path takes")
    ap.add_argument("--quiet", action="store_true", help="the walk only, not the loop's listing")
    args = ap.parse_args()
    funcs = disassemble(args.file, args.arch)
    name = args.kernel or next(iter(funcs))
    code = funcs[name]
    at = {a: i for i, (a, _) in enumerate(code)}
    loops = []
    for i, (a, op) in enumerate(code):
        t = target(op)
        if t is not None and t <= a and any(klass(o) == "barrier" for _, o in code[at[t]:i + 1]):
            loops.append((a - t, t, a))
    if not loops:
        raise SystemExit(f"sass-loop: no loop with a BAR in {name}")
    _, head, back = max(loops)
    print(f"{name}: loop 0x{head:04x}..0x{back:04x}")
    if not args.quiet:
        for a, op in code[at[head]:at[back] + 1]:
            print(f"  {a:04x}  {klass(op):8s} {op}")
    take = {int(x, 16) for x in args.take.split(",") if x}
    path, i = [], at[head]
    while True:
        a, op = code[i]
        path.append((a, op))
        t = target(op)
        cond = op.startswith("@")
        if a == back:
            break
        if t is not None and (not cond or a in take):
            if t not in at or len(path) > 2000:
                break
            i = at[t]
        else:
            i += 1
    print(f"path (taken: {', '.join(f'0x{x:x}' for x in sorted(take)) or 'none'}), {len(path)} instructions:")
    for a, op in path:
        k = klass(op)
        if k != "alu":
            print(f"  {a:04x}  {k:8s} {op}")
    counts = collections.Counter(klass(op) for _, op in path)
    print("  counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
