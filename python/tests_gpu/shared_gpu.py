# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test: N TLE ranks sharing one GPU in one process (tle.torch.SharedGpu,
one stream per rank), started by TLE's launcher:

    python -m tle.launch --device cuda --ranks 2 python/tests_gpu/shared_gpu.py

1. the neighbour exchange (kernels.exchange_kernel, block group, index =
   program_id) over grids of 1, 8 and 66 programs per rank: every value
   checked, 0 errors expected;
2. a grid that cannot be resident beside the other ranks' (more CTAs than
   the GPU holds, over the ranks) is refused before anything is launched,
   with the figures;
3. rank 1 skips the barrier rank 0 waits in (kernels.maybe_barrier_kernel,
   a 2 s deadline): rank 0's synchronize raises TLE's timeout report naming
   rank 1. Last, since a timed-out kernel leaves the CUDA context unusable.

One GPU shows the protocol, the faults and the reports, not memory-ordering
bugs (docs/gpu.md, "Ranks sharing one GPU"). Prints one PASS/FAIL line per
case; exit status 1 when any fails.
"""

from __future__ import annotations

import sys

import torch

import tle
from kernels import exchange_kernel, maybe_barrier_kernel
from tle.torch import SharedGpu, TLEError

BLOCK = 256


def main() -> int:
    failed = 0

    def verdict(name: str, ok: bool, detail: str = "") -> None:
        nonlocal failed
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    libs = tle.extern_libs()
    # One barrier slot per program: the exchange runs up to 66 programs.
    gpu = SharedGpu.from_launcher(timeout_ms=2000, n_barriers=128)
    try:
        n = gpu.size
        for programs in (1, 8, 66):
            mems = gpu.alloc(programs * BLOCK, torch.int32)
            errors = [torch.zeros(programs, dtype=torch.int32, device=f"cuda:{gpu.device}") for _ in range(n)]
            gpu.launch(exchange_kernel, (programs,), lambda r: (gpu.ranks[r].dev_comm, mems[r].handle, errors[r],
                                                                 20), BLOCK=BLOCK, GROUP="block", SHIFT=0,
                       extern_libs=libs)
            gpu.synchronize()
            bad = sum(int(e.sum()) for e in errors)
            verdict(f"exchange, {n} ranks on one GPU, {programs} programs each", bad == 0, f"{bad} errors")

        too_many = 1 << 16
        try:
            gpu.launch(maybe_barrier_kernel, (too_many,), lambda r: (gpu.ranks[r].dev_comm, 0), extern_libs=libs)
        except ValueError as e:
            verdict("a grid that cannot fit beside the other ranks' is refused", "cannot run" in str(e), str(e))
        else:
            gpu.synchronize()
            verdict("a grid that cannot fit beside the other ranks' is refused", False, "it was launched")

        # Rank 1 skips (skip = 16, not 1: Triton specializes an argument equal
        # to 1, and compiling that second variant while rank 0 already waits
        # outlasted the 2 s timeout; 0 and 16 share one compiled kernel).
        gpu.launch(maybe_barrier_kernel, (1,), lambda r: (gpu.ranks[r].dev_comm, 16 * int(r == 1)),
                   extern_libs=libs)
        try:
            gpu.ranks[0].synchronize()
        except TLEError as e:
            verdict("rank 1 skips the barrier: rank 0 reports it", "missing peers: 1" in str(e),
                    str(e).splitlines()[0])
        else:
            verdict("rank 1 skips the barrier: rank 0 reports it", False, "no error")
    finally:
        try:
            gpu.close()
        except (TLEError, RuntimeError):  # the context the timed-out kernel left
            pass
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
