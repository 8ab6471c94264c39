# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The one-GPU benchmark's Triton rows (bench/SharedBench.cu, rows `triton`
and `triton-stateless`): a loop of block-group sync(acq_rel) barriers in a
Triton kernel, as a session (tle.language.session_open, then
distributed_barrier(session=s) in the loop, then session_close) and as
stateless calls, program b on slot base + b (the row's own slots, as the
C++ rows take theirs), timed in the kernel with
%globaltimer after one untimed relaxed round like the other rows; thread 0
of program b stores the nanoseconds into out[b].

The GPU machine has no LLVM, but Triton compiles for sm_90 without a GPU:
scripts/gpu-prepare.sh runs this file there (on the CPU machine) to write
OUT/triton_{session,stateless}.ptx and a .meta beside each (entry name,
threads, shared memory, the null scratch pointers Triton's launch appends,
rounds, slot_base=1 for the slot base argument), which tle-bench-shared
loads with the driver API.

    python bench/kernels/triton_loop.py OUT_DIR [--iters 10000]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import tle  # noqa: E402
import tle.language as tlx  # noqa: E402

THREADS = 128


@triton.jit
def _now():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False,
                                     pack=1)


@triton.jit
def triton_session(comm, out, base, ITERS: tl.constexpr):
    slot = base + tl.program_id(0)
    tlx.distributed_barrier(comm, order="relaxed", index=slot)
    s = tlx.session_open(comm, index=slot)
    t0 = _now()
    for _ in range(ITERS):
        s = tlx.distributed_barrier(comm, session=s)
    t1 = _now()
    tlx.session_close(comm, s)
    tl.store(out + tl.program_id(0), t1 - t0)


@triton.jit
def triton_stateless(comm, out, base, ITERS: tl.constexpr):
    slot = base + tl.program_id(0)
    tlx.distributed_barrier(comm, order="relaxed", index=slot)
    t0 = _now()
    for _ in range(ITERS):
        tlx.distributed_barrier(comm, index=slot)
    t1 = _now()
    tl.store(out + tl.program_id(0), t1 - t0)


def compile_one(fn, iters: int, out: Path) -> None:
    signature = {"comm": "i64", "out": "*i64", "base": "i32", "ITERS": "constexpr"}
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs={"ITERS": iters})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": THREADS // 32, "extern_libs": tle.extern_libs()})
    ptx = kernel.asm["ptx"]
    name = kernel.metadata.name
    entry = re.search(rf"\.entry {name}\(((?:.|\n)*?)\)", ptx)
    if not entry:
        raise SystemExit(f"no .entry {name} in the PTX")
    params = len(re.findall(r"\.param\s", entry[1]))
    stem = fn.__name__
    (out / f"{stem}.ptx").write_text(ptx)
    (out / f"{stem}.meta").write_text(f"name={name}\nthreads={kernel.metadata.num_warps * 32}\n"
                                      f"shared={kernel.metadata.shared}\nnull_tail={params - 3}\n"
                                      f"iters={iters}\nslot_base=1\n")
    print(f"triton_loop: {stem}: .entry {name}, {params} parameters, {kernel.metadata.shared} B shared")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--iters", type=int, default=10000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for fn in (triton_session, triton_stateless):
        compile_one(fn, args.iters, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
