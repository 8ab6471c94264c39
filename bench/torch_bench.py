"""PyTorch's figures for the side-by-side table (one process per GPU of the machine).

- hostbar:   SymmetricMemory.barrier() in an eager loop and replayed from a
             CUDA graph (one kernel per barrier, like TLE's host-launched
             barrier);
- allreduce: torch.ops.symm_mem.one_shot_all_reduce (float32 sum) for
             8 KB - 1 MB, eager and, where capture works, graph-replayed.

Prints the same CSV lines as the C++ benchmarks:
RESULT,<section>,<impl>,<x>,<microseconds>,<note>; the slower rank's figure.
Multicast stays off (TORCH_SYMM_MEM_DISABLE_MULTICAST=1, set by bench/run.sh).
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def result(section, impl, x, us, note=""):
    note = note.replace(",", ";")  # the last CSV field: no commas in it
    print(f"RESULT,{section},{impl},{x},{us:.4f},{note}", flush=True)


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


def slowest(value):
    """The larger of the ranks' figures (every rank gets it)."""
    got = [None] * dist.get_world_size()
    dist.all_gather_object(got, value)
    if any(v is None for v in got):
        return None
    return max(got)


def worker(rank, world, sections):
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
                buf.fill_(float(rank + 1))
                torch.cuda.synchronize()
                dist.barrier()
                out = op(buf, "sum", group_name)
                torch.cuda.synchronize()
                ok = bool(torch.all(out == float(world * (world + 1) // 2)))
                for _ in range(20):
                    op(buf, "sum", group_name)
                torch.cuda.synchronize()
                dist.barrier()
                eager = slowest(timed(lambda: op(buf, "sum", group_name),
                                      1000))
                try:
                    graph = graphed(lambda: op(buf, "sum", group_name), 50, 10)
                except Exception as e:  # capture unsupported: eager only
                    graph = None
                    if rank == 0:
                        print(f"note: graph capture of one_shot_all_reduce "
                              f"failed: {e}", flush=True)
                graph = slowest(graph)
                if rank == 0:
                    result("allreduce", "torch-oneshot", size, eager,
                           "symm_mem.one_shot_all_reduce" +
                           ("" if ok else " WRONG RESULT"))
                    if graph is not None:
                        result("allreduce", "torch-oneshot-graph", size,
                               graph)
                size *= 2
    dist.barrier()
    dist.destroy_process_group()


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
