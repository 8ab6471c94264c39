# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the simulated-node tests under Triton's interpreter
(test_nodes.py): every team across nodes, one process per rank, started by

    python -m tle.launch --nodes M --ranks N python/tests/node_ranks.py

Each rank prints its rank and size in every team, then runs rounds of:
a write into its right node neighbour's buffer and an INTRA barrier; a
WORLD barrier; a signal to the next world rank (WORLD) and to the next
node's rank of its rail (INTER), waiting for both of its words; an INTER
barrier. It checks what its left node neighbour wrote and the words.

    [rank r] TEAMS intra=R/S inter=R/S world=R/S
    [rank r] PASS ...   or   [rank r] FAIL ...
"""

from __future__ import annotations

import sys

import numpy as np
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.cpu import Communicator, Tensor

ROUNDS = 3


@triton.jit
def query_kernel(comm, out):
    tl.store(out + 0, tlx.team_rank(comm, "intra"))
    tl.store(out + 1, tlx.team_size(comm, "intra"))
    tl.store(out + 2, tlx.team_rank(comm, "inter"))
    tl.store(out + 3, tlx.team_size(comm, "inter"))
    tl.store(out + 4, tlx.team_rank(comm, "world"))
    tl.store(out + 5, tlx.team_size(comm, "world"))


@triton.jit
def round_kernel(comm, mem, out, ROUND: tl.constexpr):
    local = tlx.team_rank(comm, "intra")
    per_node = tlx.team_size(comm, "intra")
    node = tlx.team_rank(comm, "inter")
    nodes = tlx.team_size(comm, "inter")
    world = tlx.team_rank(comm, "world")
    size = tlx.team_size(comm, "world")
    dst = tlx.intra_pointer(mem, 0, (local + 1) % per_node, dtype=tl.int32)
    tl.store(dst, world * 100 + ROUND)
    tlx.distributed_barrier(comm, index=0, team="intra")
    tl.store(out, tl.load(tlx.local_pointer(mem, 0, dtype=tl.int32)))
    tlx.distributed_barrier(comm, index=0, team="world")
    tlx.signal(comm, (world + 1) % size, 0, team="world")
    tlx.signal(comm, (node + 1) % nodes, 1, team="inter")
    tlx.signal_wait(comm, 0, ROUND)
    tlx.signal_wait(comm, 1, ROUND)
    tl.store(out + 1, tlx.read_signal(comm, 0).to(tl.int32))
    tl.store(out + 2, tlx.read_signal(comm, 1).to(tl.int32))
    tlx.distributed_barrier(comm, index=1, team="inter")


def main() -> int:
    with Communicator.from_launcher() as comm:
        out = Tensor(np.full(6, -1, np.int32))
        query_kernel[(1,)](comm.dev_comm, out, extern_libs=tle.extern_libs())
        local, per_node, node, nodes, world, size = (int(v) for v in out.numpy())
        print(f"[rank {comm.rank}] TEAMS intra={local}/{per_node} inter={node}/{nodes} world={world}/{size}",
              flush=True)
        mem = comm.alloc((1,), np.int32)
        left = node * per_node + (local + per_node - 1) % per_node
        for k in range(1, ROUNDS + 1):
            got = Tensor(np.full(3, -1, np.int32))
            round_kernel[(1,)](comm.dev_comm, mem.handle, got, ROUND=k, extern_libs=tle.extern_libs())
            seen, world_word, inter_word = (int(v) for v in got.numpy())
            if (seen, world_word, inter_word) != (left * 100 + k, k, k):
                print(f"[rank {comm.rank}] FAIL round {k}: read {seen} (expected {left * 100 + k}), "
                      f"words {world_word} {inter_word} (expected {k})", flush=True)
                return 1
        mem.close()
        print(f"[rank {comm.rank}] PASS {ROUNDS} rounds", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
