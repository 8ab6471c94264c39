# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FlagTree's host functions: ``get_mem_pool``, ``create_dist_tensor`` and
``cleanup_communicator``, over TLE's communicator and registration.

The process holds one TLE communicator over the whole job, made on first
use, collectively: with PyTorch from the ``torch.distributed`` world
(initialized here if the program has not, one GPU per process from
``LOCAL_RANK``, as torchrun starts them), or for CPU ranks under Triton's
interpreter from TLE's launcher (``python -m tle.launch``; NumPy arrays, no
PyTorch). TLE serves one node, so the job must be one node.
``create_dist_tensor`` registers a tensor's existing memory with it
(``Communicator.register``, no copy) and returns the ``DistContext`` kernels
take as a ``tl.constexpr``.

Nothing is compiled when this module is imported or used: the allocator of
``get_mem_pool`` is libtle's ``tleShareableAlloc``. PyTorch is imported only
when a function here needs it.
"""

from __future__ import annotations

import itertools
import os
import sys
from typing import Any

from .._interp import interpreting
from . import _link
from .context import DistContext

__all__ = ["cleanup_communicator", "communicator", "create_dist_tensor", "device_type", "get_mem_pool"]

#: The device kind FlagTree's tests allocate on.
device_type = "cpu" if interpreting() else "cuda"

_serials = itertools.count(1)


class _State:
    """The process's communicator and what was registered with it."""

    def __init__(self):
        self.comm: Any = None        # a tle.torch or tle.cpu Communicator
        self.tag = ""                # DistContext.comm_tag of comm
        self.registered: list = []   # the buffer of each create_dist_tensor
        self.owns_process_group = False


_state = _State()


def _check_one_node(world_size: int) -> None:
    local = os.environ.get("LOCAL_WORLD_SIZE")
    if local is not None and int(local) != world_size:
        raise RuntimeError(f"TLE serves the GPUs of one node, and this job spans several (WORLD_SIZE={world_size}, "
                           f"LOCAL_WORLD_SIZE={local}): tle.flagtree cannot build a communicator for it")


def _torch_communicator():
    """The communicator over the torch.distributed world, made on first use
    (collective)."""
    import torch
    import torch.distributed as dist

    from ..torch import Communicator
    if _state.comm is None:
        if not dist.is_initialized():
            local_rank = int(os.environ.get("LOCAL_RANK", "0"))
            if interpreting():
                dist.init_process_group("gloo")
            else:
                torch.cuda.set_device(local_rank)
                dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
            _state.owns_process_group = True
        _check_one_node(dist.get_world_size())
        _state.comm = Communicator.from_process_group()
        _state.tag = f"{os.getpid()}.{next(_serials)}"
    return _state.comm


def _cpu_communicator():
    """The communicator of a ``python -m tle.launch`` run, made on first use
    (collective)."""
    from ..cpu import Communicator
    if _state.comm is None:
        _state.comm = Communicator.from_launcher()
        _state.tag = f"{os.getpid()}.{next(_serials)}"
    return _state.comm


def get_mem_pool():
    """A ``torch.cuda.MemPool`` whose allocations ``create_dist_tensor`` can
    register (the same pool on every call): ``tle.torch.shareable_mem_pool``.
    Initializes ``torch.distributed`` (NCCL, device from ``LOCAL_RANK``) and
    the communicator if needed; collective the first time."""
    from ..torch import shareable_mem_pool
    if interpreting():
        raise RuntimeError("get_mem_pool gives a CUDA memory pool; under Triton's interpreter register a "
                           "tle.cpu.shareable_array with create_dist_tensor instead")
    _torch_communicator()
    return shareable_mem_pool()


def create_dist_tensor(tensor) -> DistContext:
    """Registers ``tensor``'s memory as a symmetric buffer of the process's
    communicator (collective: every rank, a tensor of the same size) and
    returns the context kernels take as a ``tl.constexpr`` argument.

    ``tensor``: a contiguous CUDA tensor of this rank's GPU in shareable
    memory (``with torch.cuda.use_mem_pool(get_mem_pool()):``, or PyTorch's
    default allocator without ``expandable_segments``); on CPU ranks under
    Triton's interpreter, an array of ``tle.cpu.shareable_array``. The
    tensor stays registered (and referenced) until ``cleanup_communicator``.
    """
    # A torch tensor needs torch imported already; NumPy (CPU ranks) is not
    # imported for it: PyTorch does not need NumPy.
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        comm = _torch_communicator()
        if comm.device is not None:
            # Registration publishes the tensor to the peers: the writes
            # queued to it so far must have landed first.
            torch.cuda.synchronize(comm.device)
    else:
        comm = _cpu_communicator()
    buf = comm.register(tensor)
    _state.registered.append(buf)
    return DistContext(mem=buf.handle, dev_comm=comm.dev_comm, rank=comm.rank, size=comm.size, spans_world=True,
                       comm_tag=_state.tag, bitcode=_link.bitcode_digest())


def communicator():
    """TLE's communicator behind the contexts (a ``tle.torch`` or
    ``tle.cpu`` ``Communicator``), None before the first
    ``create_dist_tensor``. Not FlagTree's: TLE's way to read a failed
    launch's report, ``tle.flagtree.communicator().synchronize()`` (a
    barrier wait that timed out, a slot or peer out of range)."""
    return _state.comm


def cleanup_communicator() -> None:
    """Ends what ``create_dist_tensor`` started (collective): waits for this
    rank's kernels and for every rank, releases the registrations (the
    tensors stay the caller's), destroys the communicator, and destroys the
    ``torch.distributed`` group if ``tle.flagtree`` created it. A later
    ``create_dist_tensor`` starts a new communicator."""
    comm = _state.comm
    if comm is None:
        return
    torch_comm = hasattr(comm, "torch_device")
    if torch_comm:
        import torch
        import torch.distributed as dist
        if comm.device is not None:
            torch.cuda.synchronize(comm.device)
        # No rank unmaps a peer's memory while that peer's kernels may
        # still use its own mappings of ours, and no rank frees its tensors
        # before every peer has unmapped them.
        dist.barrier()
    for buf in _state.registered:
        buf.close()
    _state.registered = []
    if torch_comm:
        dist.barrier()
    comm.close()
    _state.comm = None
    if torch_comm and _state.owns_process_group:
        dist.destroy_process_group()
        _state.owns_process_group = False
