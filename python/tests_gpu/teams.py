# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test: Triton kernels over the INTER and WORLD teams on the GPUs of
one node (issue 19).

On one node INTER is each rank alone and WORLD is the node (docs/design.md,
"Teams"), so a kernel written for several nodes runs here unchanged. Each
program: checks team_rank/team_size of the three teams against the
communicator, then rounds of a WORLD signal to the next rank, its wait, an
INTER barrier and a WORLD barrier on the program's own slots; the final
word must count every round. Prints PASS/FAIL and the time per round.

    torchrun --nproc-per-node N python/tests_gpu/teams.py [--rounds R]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import tle
import tle.language as tlx
from common import distributed, fail, log


@triton.jit
def teams_kernel(comm, out, n_rounds, first):
    pid = tl.program_id(0)
    rank = tlx.team_rank(comm, "world")
    size = tlx.team_size(comm, "world")
    nxt = (rank + 1) % size
    for i in range(n_rounds):
        tlx.signal(comm, nxt, pid, team="world")
        tlx.signal_wait(comm, pid, first + i + 1)
        tlx.distributed_barrier(comm, index=pid, team="inter")
        tlx.distributed_barrier(comm, index=pid, team="world")
    base = out + pid * 8
    tl.store(base + 0, tlx.team_rank(comm, "intra"))
    tl.store(base + 1, tlx.team_size(comm, "intra"))
    tl.store(base + 2, tlx.team_rank(comm, "inter"))
    tl.store(base + 3, tlx.team_size(comm, "inter"))
    tl.store(base + 4, rank)
    tl.store(base + 5, size)
    tl.store(base + 6, tlx.read_signal(comm, pid).to(tl.int32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10000)
    parser.add_argument("--programs", type=int, default=4)
    args = parser.parse_args()
    with distributed(n_signals=args.programs, n_barriers=args.programs) as comm:
        out = torch.zeros((args.programs, 8), dtype=torch.int32, device="cuda")
        times = []
        for launch in range(6):
            dist.barrier()
            start = time.perf_counter()
            teams_kernel[(args.programs,)](comm.dev_comm, out, args.rounds, launch * args.rounds,
                                           extern_libs=tle.extern_libs())
            comm.synchronize()
            times.append((time.perf_counter() - start) * 1e6 / args.rounds)
            # Words only grow: the next launch continues from this count.
            want = [comm.rank, comm.size, 0, 1, comm.rank, comm.size]
            rows = out.tolist()
            bad = [r for r in rows if r[:6] != want or r[6] != args.rounds * (launch + 1)]
            if bad:
                fail(f"launch {launch}: got {bad[0]}, wanted {want} and word {args.rounds * (launch + 1)}")
        med = sorted(times[1:])[len(times[1:]) // 2]
        log(f"PASS teams on {comm.size} rank(s): {args.programs} programs x {args.rounds} rounds of a WORLD "
            f"signal, its wait, an INTER and a WORLD barrier; per round median {med:.2f} us "
            f"[{min(times[1:]):.2f}-{max(times[1:]):.2f}] over 5 launches")


if __name__ == "__main__":
    main()
