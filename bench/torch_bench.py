# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch's figures for the side-by-side table (one process per GPU of the machine).

- hostbar:   SymmetricMemory.barrier() in an eager loop and replayed from a
             CUDA graph (one kernel per barrier, like TLE's host-launched
             barrier);
- allreduce: torch.ops.symm_mem.one_shot_all_reduce (float32 sum) for
             8 KB - 1 MB, eager and, where capture works, graph-replayed;
             the sum of a non-zero input is checked after the first call,
             the eager series and the graph replays: a wrong one marks the
             row "WRONG RESULT" (bench/report.py fails it) and the program
             exits 1.

Prints the same CSV lines as the C++ benchmarks:
RESULT,<section>,<impl>,<x>,<microseconds>,<note>; the slower rank's figure.
Multicast stays off (TORCH_SYMM_MEM_DISABLE_MULTICAST=1, set by bench/run.sh).
"""

import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def result(section, impl, x, us, note=""):
    note = note.replace(",", ";")  # the last CSV field: no commas in it
    print(f"RESULT,{section},{impl},{x},{us:.4f},{note}", flush=True)


# Repetitions of every timed series: the figure is their median, and the
# note carries n, min and max (bench/report.py's spread and error bars).
REPS = 7


def result_stats(section, impl, x, figures, note=""):
    spread = (f"n={len(figures)};min={min(figures):.4f};"
              f"max={max(figures):.4f}")
    result(section, impl, x, statistics.median(figures),
           spread + (";" + note if note else ""))


def timed(fn, iters):
    """Microseconds per call of fn() over `iters` calls, by CUDA events."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / iters


def graphed(fn, per_graph, replays):
    """Microseconds per call of fn() captured `per_graph` times in a graph."""
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with torch.cuda.graph(g):
            for _ in range(per_graph):
                fn()
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    dist.barrier()
    us = timed(g.replay, replays) / per_graph
    return us


def wrong(out, expected):
    """Elements of `out` that differ from `expected` (after the stream)."""
    torch.cuda.synchronize()
    return int((out != expected).sum().item())


def verdict(bad):
    return (f"; WRONG RESULT: {bad} elements differ from the sum" if bad
            else "; sum checked")


def total(value):
    """The sum of the ranks' figures (every rank gets it)."""
    got = [None] * dist.get_world_size()
    dist.all_gather_object(got, value)
    return sum(got)


def slowest(value):
    """The larger of the ranks' figures (every rank gets it)."""
    got = [None] * dist.get_world_size()
    dist.all_gather_object(got, value)
    if any(v is None for v in got):
        return None
    return max(got)


def worker(rank, world, sections):
    failures = []
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    import torch.distributed._symmetric_memory as symm_mem
    group_name = dist.group.WORLD.group_name
    if hasattr(symm_mem, "enable_symm_mem_for_group"):
        try:
            symm_mem.enable_symm_mem_for_group(group_name)
        except Exception:  # deprecated or already on in newer releases
            pass

    if "hostbar" in sections:
        t = symm_mem.empty(1024, device=f"cuda:{rank}")
        hdl = symm_mem.rendezvous(t, group_name)
        for _ in range(100):
            hdl.barrier(channel=0)
        torch.cuda.synchronize()
        dist.barrier()
        eager = slowest(timed(lambda: hdl.barrier(channel=0), 2000))
        graph = slowest(graphed(lambda: hdl.barrier(channel=0), 100, 20))
        if rank == 0:
            result("hostbar", "torch", "eager", eager,
                   "SymmetricMemory.barrier()")
            result("hostbar", "torch", "graph", graph,
                   "SymmetricMemory.barrier() graph-replayed")

    if "allreduce" in sections:
        op = getattr(getattr(torch.ops, "symm_mem", None),
                     "one_shot_all_reduce", None)
        if op is None:
            if rank == 0:
                print("SKIPPED: torch.ops.symm_mem.one_shot_all_reduce "
                      "not found", flush=True)
        else:
            size = 8 << 10
            while size <= 1 << 20:
                n = size // 4
                buf = symm_mem.empty(n, dtype=torch.float32,
                                     device=f"cuda:{rank}")
                symm_mem.rendezvous(buf, group_name)
                # Rank r holds (r+1) * (1 + i % 7): exact float sums that
                # differ from a lost or doubled contribution.
                pattern = 1 + torch.arange(n, device=f"cuda:{rank}") % 7
                buf.copy_(float(rank + 1) * pattern.float())
                expected = float(world * (world + 1) // 2) * pattern.float()
                torch.cuda.synchronize()
                dist.barrier()
                # Wrong elements, summed over the ranks, of each check.
                wrong_eager = wrong(op(buf, "sum", group_name), expected)
                for _ in range(20):
                    op(buf, "sum", group_name)
                torch.cuda.synchronize()
                dist.barrier()
                outs = []

                def call():
                    outs[:] = [op(buf, "sum", group_name)]
                eager = [slowest(timed(call, 1000)) for _ in range(REPS)]
                wrong_eager += wrong(outs[0], expected)
                graph = []
                try:
                    for _ in range(REPS):
                        graph.append(graphed(call, 50, 10))
                    # The graph's own output tensor, written by the replays.
                    wrong_graph = wrong(outs[0], expected)
                except Exception as e:  # capture unsupported: eager only
                    graph, wrong_graph = [], 0
                    if rank == 0:
                        print(f"note: graph capture of one_shot_all_reduce "
                              f"failed: {e}", flush=True)
                # Every rank calls slowest() REPS times, whatever failed.
                graph = [slowest(g) for g in (graph or [None] * REPS)]
                if None in graph:
                    graph = None
                wrong_eager = total(wrong_eager)
                wrong_graph = total(wrong_graph)
                if rank == 0:
                    if wrong_eager or wrong_graph:
                        failures.append(size)
                        print(f"FAIL: one_shot_all_reduce {size} bytes: "
                              f"{wrong_eager} wrong elements eager, "
                              f"{wrong_graph} after graph replays",
                              flush=True)
                    result_stats("allreduce", "torch-oneshot", size, eager,
                                 "symm_mem.one_shot_all_reduce"
                                 + verdict(wrong_eager))
                    if graph is not None:
                        result_stats("allreduce", "torch-oneshot-graph", size,
                                     graph,
                                     "graph-replayed" + verdict(wrong_graph))
                size *= 2
    dist.barrier()
    dist.destroy_process_group()
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    sections = sys.argv[1].split(",") if len(sys.argv) > 1 else [
        "hostbar", "allreduce"]
    print(f"INFO,torch,{torch.__version__},nccl "
          f"{'.'.join(map(str, torch.cuda.nccl.version()))}", flush=True)
    # Every GPU of the machine, like the TLE figures.
    world = torch.cuda.device_count()
    if world < 2:
        print("SKIPPED: fewer than 2 GPUs visible to torch", flush=True)
        sys.exit(0)
    mp.spawn(worker, args=(world, sections), nprocs=world)
