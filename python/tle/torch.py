# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE communicators and symmetric buffers for PyTorch programs.

``Communicator.from_process_group`` turns a ``torch.distributed`` group whose
processes are the GPUs of one node (torchrun, one process per GPU) into a TLE
communicator with the CUDA backend: rank 0 creates the bootstrap id, the
group broadcasts it, every rank joins with its current CUDA device. Kernels
take ``comm.dev_comm`` and ``buf.handle`` (ints) as arguments; ``buf.tensor``
is this rank's copy of a symmetric buffer as a torch tensor.
``comm.register(tensor)`` makes a tensor the program already has a
symmetric buffer, without a copy (its memory must be shareable: see
``shareable_mem_pool``).

Under Triton's interpreter (``TRITON_INTERPRET=1``; a ``gloo`` group, no GPU
needed) the ranks are CPU ranks instead: the communicator uses the emulator
backend and ``buf.tensor`` is a CPU tensor on memory mapped into every rank,
so the interpreter's loads and stores through ``intra_pointer`` reach the
peers' copies directly.

    comm = Communicator.from_process_group()
    buf = comm.alloc((1024,), torch.float32)
    kernel[grid](comm.dev_comm, buf.handle, ..., extern_libs=tle.extern_libs())
    comm.synchronize()      # raises TLEError with TLE's report if a wait timed out
    comm.close()

``SharedGpu(n)`` makes n ranks that share one GPU in this process
(``tleCommInitAll`` with the device repeated), one CUDA stream each, for
developing multi-GPU kernels on one GPU (``python -m tle.launch --device
cuda --ranks n script.py``; docs/gpu.md, "Ranks sharing one GPU"): the
protocol, faults and hang reports can be exercised that way, memory-ordering
bugs cannot be seen.

Memory other engines allocated becomes a TLE buffer without a copy: a tensor
of PyTorch's symmetric memory (``symm_mem.empty`` + ``rendezvous``) with
``comm.import_symmetric(tensor)``, any tensor whose peers' copies are mapped
here with ``comm.import_tensor(tensor, peer_ptrs)``.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import math
import os
import threading
from typing import Sequence

try:
    import torch
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    raise ModuleNotFoundError("tle.torch needs PyTorch, which is not installed: "
                              "pip install 'tle-triton[torch]' (or install torch>=2.9 yourself)",
                              name="torch") from e
import torch.distributed as dist
import torch.utils.dlpack

from . import launch
from ._interp import interpreting
from .runtime import Alloc, Backend, Comm, ErrorInfo, Mem, TLEError, get_unique_id

__all__ = ["Alloc", "Communicator", "SharedGpu", "SymmetricBuffer", "TLEError", "shareable_mem_pool"]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DLDeleter)]

_DL_CPU, _DL_CUDA, _DL_UINT = 1, 2, 1
#: What each exported DLPack tensor keeps alive (its structs and the owner),
#: by address of its DLManagedTensor, until torch calls the deleter.
_dlpack_exports: dict[int, tuple] = {}


@_DLDeleter
def _dlpack_deleter(managed) -> None:
    _dlpack_exports.pop(ctypes.addressof(managed.contents), None)


def _bytes_tensor(owner: object, address: int, nbytes: int, device: torch.device) -> torch.Tensor:
    """A uint8 tensor over ``nbytes`` at ``address`` on ``device`` that keeps
    ``owner`` alive as long as torch keeps the memory.

    Built as a DLPack capsule rather than through __cuda_array_interface__,
    which torch only imports when NumPy is installed."""
    shape = (ctypes.c_int64 * 1)(nbytes)
    managed = _DLManagedTensor()
    managed.dl_tensor.data = address
    managed.dl_tensor.device = _DLDevice(_DL_CUDA if device.type == "cuda" else _DL_CPU, device.index or 0)
    managed.dl_tensor.ndim = 1
    managed.dl_tensor.dtype = _DLDataType(_DL_UINT, 8, 1)
    managed.dl_tensor.shape = shape
    managed.deleter = _dlpack_deleter
    _dlpack_exports[ctypes.addressof(managed)] = (managed, shape, owner)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return torch.utils.dlpack.from_dlpack(new_capsule(ctypes.addressof(managed), b"dltensor", None))


def _nccl_comm_of(group: dist.ProcessGroup, index: int) -> int:
    """The address of ``group``'s NCCL communicator on CUDA device ``index``
    (the current device), ``ProcessGroupNCCL._comm_ptr()``. One collective
    first: a group creates its communicators lazily unless
    ``init_process_group`` had a ``device_id``, and some PyTorch releases
    dereference a missing one."""
    try:
        backend = group._get_backend(torch.device("cuda", index))
    except RuntimeError as e:
        raise ValueError(f"bootstrap='nccl' needs a process group with an NCCL backend: {e}") from e
    comm_ptr = getattr(backend, "_comm_ptr", None)
    if comm_ptr is None:
        raise ValueError(f"{type(backend).__name__} does not expose its NCCL communicator (_comm_ptr); "
                         f"use bootstrap='tle'")
    dist.all_reduce(torch.zeros(1, device=torch.device("cuda", index)), group=group)
    torch.cuda.synchronize(index)
    address = comm_ptr()
    if not address:
        raise RuntimeError("the process group has no NCCL communicator on this device")
    return address


_pool_lock = threading.Lock()
#: The pool of shareable_mem_pool and its allocator, made once per process.
_pool: tuple[object, object] | None = None


def shareable_mem_pool() -> torch.cuda.MemPool:
    """A ``torch.cuda.MemPool`` whose allocations ``Communicator.register``
    can share with the other processes: its allocator is libtle's
    ``tleShareableAlloc``/``tleShareableFree`` (plain ``cudaMalloc``, which
    legacy CUDA IPC exports), through PyTorch's ``CUDAPluggableAllocator``.
    Nothing is compiled. The same pool every call::

        with torch.cuda.use_mem_pool(tle.torch.shareable_mem_pool()):
            x = torch.empty(n, device="cuda")
        buf = comm.register(x)
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            from torch.cuda.memory import CUDAPluggableAllocator
            from ._paths import host_library_path
            allocator = CUDAPluggableAllocator(host_library_path(), "tleShareableAlloc", "tleShareableFree")
            _pool = (torch.cuda.MemPool(allocator.allocator()), allocator)
            # Dropped at exit while CUDA and libtle are still up, rather
            # than whenever interpreter teardown reaches this module.
            atexit.register(_drop_pool)
        return _pool[0]


def _drop_pool() -> None:
    global _pool
    with _pool_lock:
        _pool = None


class SymmetricBuffer:
    """A symmetric buffer of one rank: the same shape and dtype on every rank,
    each rank's copy mapped into every peer.

    ``tensor`` is this rank's copy; ``handle`` is the kernel argument for
    ``tle.language.local_pointer`` / ``intra_pointer``. The memory is freed
    by ``close()`` (or ``Communicator.close()``); tensors still referring to
    it must not be used afterwards. An imported buffer (``import_tensor``,
    ``import_symmetric``) is the caller's tensor: ``close()`` releases only
    TLE's handle, and the buffer keeps the tensor (and ``owner``, such as
    the symmetric-memory handle) alive as long as it is open; so is a
    registered one (``register``), whose ``close()`` also unmaps the peers'
    copies TLE mapped.
    """

    def __init__(self, comm: Communicator, mem: Mem, shape: tuple[int, ...], dtype: torch.dtype,
                 tensor: torch.Tensor | None = None, owner: object = None, registered: bool = False):
        self._comm = comm
        self._mem = mem
        self.shape = shape
        self.dtype = dtype
        self._owner = owner
        #: A registration (``Communicator.register``): the memory is the
        #: user's tensor, which this buffer keeps alive until it is closed.
        self.registered = registered
        if tensor is None:
            tensor = _bytes_tensor(self, mem.local_ptr, mem.nbytes, comm.torch_device).view(dtype).view(shape)
        self.tensor: torch.Tensor = tensor
        #: Address of the device handle of the buffer (``tleMemGetHandle``).
        self.handle: int = mem.dev_handle

    @property
    def nbytes(self) -> int:
        return self._mem.nbytes

    @property
    def closed(self) -> bool:
        return self._mem.freed

    def close(self) -> None:
        """Free this rank's handle (not collective); idempotent. A
        registration unmaps the peers' copies and leaves the tensor's
        memory to its owner."""
        self._mem.free()
        self._owner = None

    def __enter__(self) -> SymmetricBuffer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Communicator:
    """A TLE communicator over the GPUs of one node (or, under Triton's
    interpreter, over CPU ranks), one rank per process."""

    def __init__(self, comm: Comm, device: int | None, group: dist.ProcessGroup | None = None):
        self._comm = comm
        self._buffers: list[SymmetricBuffer] = []
        self._collectives = None
        #: The CUDA device index this rank runs on; None for a CPU rank.
        self.device = device
        #: Where this rank's buffers live: ``cuda:<device>`` or ``cpu``.
        self.torch_device = torch.device("cpu") if device is None else torch.device("cuda", device)
        #: The process group the communicator was created from, if any.
        self.group = group
        self.rank = comm.rank
        self.size = comm.size
        #: Barrier slots per rank (None if unknown).
        self.n_barriers = comm.n_barriers
        #: Ranks sharing this rank's GPU (SharedGpu sets it).
        self.ranks_on_gpu = 1
        #: Address of the device communicator: the kernels' ``comm`` argument.
        self.dev_comm: int = comm.dev_comm

    @classmethod
    def from_process_group(cls, group: dist.ProcessGroup | None = None, device: int | torch.device | None = None,
                           *, n_barriers: int = 256, timeout_ms: int | None = None,
                           bootstrap_timeout_ms: int | None = None, bootstrap: str = "tle",
                           alloc: Alloc = Alloc.DEFAULT, n_signals: int = 64,
                           n_contexts: int = 4) -> Communicator:
        """Create a communicator over ``group`` (default: the world), whose
        processes must all run on this node, one GPU each. Collective.

        ``bootstrap="tle"`` (the default) joins TLE's own bootstrap, whose
        id the group broadcasts; ``bootstrap="nccl"`` rides on the group's
        NCCL communicator instead (``tleCommInitFromNccl``: TLE's exchanges
        become NCCL all-gathers, no second bootstrap; CUDA ranks only).
        ``alloc`` chooses the CUDA backend's memory (``Alloc.DEFAULT``:
        ``$TLE_CUDA_ALLOC`` or TLE's default).

        ``device`` defaults to ``torch.cuda.current_device()``, and under
        Triton's interpreter to ``"cpu"``: CPU ranks, whose communicator uses
        the emulator backend and whose buffers are CPU tensors on shared
        memory (the interpreter can address nothing else). ``n_barriers``
        is the number of barrier slots (``index`` must be below it; 256 by
        default, so that ``tle.ops`` launches one program per SM, each on
        its own slot: docs/ops.md),
        ``n_signals`` the number of signal words per rank and network
        context, ``n_contexts`` the network contexts (FlagCX's
        ``contextId``), each with its own signal words and counters.
        ``timeout_ms`` is the device wait deadline: None for
        ``$TLE_BARRIER_TIMEOUT_MS`` or its default, 0 to wait forever.
        """
        if not dist.is_initialized():
            raise RuntimeError("torch.distributed is not initialized: call dist.init_process_group() first")
        group = group if group is not None else dist.group.WORLD
        if device is None:
            device = "cpu" if interpreting() else torch.cuda.current_device()
        device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
        if device.type not in ("cuda", "cpu"):
            raise ValueError(f"a TLE communicator needs a CUDA device (or the CPU, under Triton's interpreter); "
                             f"got {device}")
        if device.type == "cuda" and interpreting():
            raise ValueError(f"under Triton's interpreter (TRITON_INTERPRET=1) kernels address host memory only: "
                             f"create the communicator on the CPU (device='cpu', the default there), not {device}")
        index = None
        if device.type == "cuda":
            index = device.index if device.index is not None else torch.cuda.current_device()
        if bootstrap == "nccl":
            if index is None:
                raise ValueError("bootstrap='nccl' needs CUDA ranks: NCCL has no CPU ranks")
            with torch.cuda.device(index):
                comm = Comm.init_from_nccl(_nccl_comm_of(group, index), n_barriers=n_barriers,
                                           timeout_ms=timeout_ms, bootstrap_timeout_ms=bootstrap_timeout_ms,
                                           alloc=alloc, n_signals=n_signals, n_contexts=n_contexts)
            return cls(comm, index, group)
        if bootstrap != "tle":
            raise ValueError(f"bootstrap must be 'tle' or 'nccl'; got {bootstrap!r}")
        rank = dist.get_rank(group)
        size = dist.get_world_size(group)
        holder: list[bytes | None] = [get_unique_id() if rank == 0 else None]
        with torch.cuda.device(index) if index is not None else contextlib.nullcontext():
            dist.broadcast_object_list(holder, src=dist.get_global_rank(group, 0), group=group)
            unique_id = holder[0]
            assert isinstance(unique_id, bytes)
            comm = Comm.init_rank(size, unique_id, rank, 0 if index is None else index,
                                  backend=Backend.EMULATOR if index is None else Backend.CUDA,
                                  n_barriers=n_barriers, timeout_ms=timeout_ms,
                                  bootstrap_timeout_ms=bootstrap_timeout_ms, alloc=alloc,
                                  n_signals=n_signals, n_contexts=n_contexts)
        return cls(comm, index, group)

    def alloc(self, shape: int | Sequence[int], dtype: torch.dtype = torch.float32) -> SymmetricBuffer:
        """A zero-filled symmetric buffer (collective: every rank calls it
        with the same shape and dtype)."""
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s <= 0 for s in shape):
            raise ValueError(f"a symmetric buffer needs a non-empty shape; got {shape}")
        nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        with torch.cuda.device(self.device) if self.device is not None else contextlib.nullcontext():
            buf = SymmetricBuffer(self, self._comm.alloc(nbytes), shape, dtype)
        self._buffers.append(buf)
        return buf

    def import_tensor(self, tensor: torch.Tensor, peer_ptrs: Sequence[int] | None = None, *,
                      owner: object = None) -> SymmetricBuffer:
        """Make ``tensor``, this rank's copy of memory already mapped into
        every rank, a TLE buffer without copying it (``tleMemImport``;
        collective, the same size on every rank). ``peer_ptrs[p]`` is the
        address of rank p's copy in this process; None (ranks of one process
        only) takes every rank's own address. ``owner`` is kept alive with
        the buffer. Closing the buffer leaves the memory to its owner."""
        if not tensor.is_contiguous():
            raise ValueError("import_tensor needs a contiguous tensor: kernels address it by byte offset")
        if tensor.device != self.torch_device:
            raise ValueError(f"the tensor is on {tensor.device}, this rank on {self.torch_device}")
        nbytes = tensor.numel() * tensor.element_size()
        with torch.cuda.device(self.device) if self.device is not None else contextlib.nullcontext():
            mem = self._comm.import_mem(tensor.data_ptr(), nbytes, peer_ptrs)
        buf = SymmetricBuffer(self, mem, tuple(tensor.shape), tensor.dtype, tensor=tensor, owner=owner)
        self._buffers.append(buf)
        return buf

    def import_symmetric(self, tensor: torch.Tensor, handle: object = None) -> SymmetricBuffer:
        """Make a tensor of PyTorch's symmetric memory
        (``torch.distributed._symmetric_memory.empty``) a TLE buffer in one
        call: ``handle`` is its ``rendezvous`` over this communicator's group
        (done here when None; collective), whose peers' buffers give
        ``peer_ptrs``. The group's ranks must be this communicator's, in the
        same order (true when both come from one process group)."""
        if handle is None:
            import torch.distributed._symmetric_memory as symm_mem
            if self.group is None:
                raise ValueError("import_symmetric needs the symmetric-memory handle (rendezvous) "
                                 "when the communicator was not made from a process group")
            group_name = self.group.group_name
            # Needed before rendezvous up to PyTorch 2.7; deprecated (or
            # already on) in later releases.
            if hasattr(symm_mem, "enable_symm_mem_for_group"):
                with contextlib.suppress(Exception):
                    symm_mem.enable_symm_mem_for_group(group_name)
            handle = symm_mem.rendezvous(tensor, group_name)
        if handle.rank != self.rank or handle.world_size != self.size:
            raise ValueError(f"the symmetric memory is rank {handle.rank} of {handle.world_size}, the communicator "
                             f"rank {self.rank} of {self.size}: rendezvous over the communicator's group")
        bases = list(handle.buffer_ptrs)
        offset = tensor.data_ptr() - bases[self.rank]
        nbytes = tensor.numel() * tensor.element_size()
        # buffer_size is missing from some releases' handles: then only the
        # start is checked (TLE checks the last byte's mapping itself).
        limit = getattr(handle, "buffer_size", None)
        if offset < 0 or (limit is not None and offset + nbytes > limit):
            raise ValueError(f"the tensor ({nbytes} bytes at offset {offset}) is not inside the symmetric buffer "
                             f"of {limit} bytes")
        return self.import_tensor(tensor, [base + offset for base in bases], owner=handle)

    def register(self, tensor: torch.Tensor) -> SymmetricBuffer:
        """``tensor``'s existing memory as a symmetric buffer (collective:
        every rank registers a tensor of the same size in bytes). Its
        ``handle`` is a kernel's ``mem`` argument, as for ``alloc``; its
        ``tensor`` is ``tensor`` itself.

        The tensor must be contiguous and on this rank's device, in memory
        that CUDA IPC can share: PyTorch's default allocator without
        ``expandable_segments``, or a pool of ``shareable_mem_pool()``
        (``with torch.cuda.use_mem_pool(tle.torch.shareable_mem_pool()):``).
        Closing the buffer unmaps the peers' copies; keep the tensor alive
        on every rank until every rank has closed its registration.
        """
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"register needs a torch.Tensor; got {type(tensor).__name__}")
        if tensor.device != self.torch_device:
            raise ValueError(f"the tensor is on {tensor.device}, but this rank's communicator is on "
                             f"{self.torch_device}")
        if not tensor.is_contiguous():
            raise ValueError("register needs a contiguous tensor: kernels address its copies as base + offset")
        nbytes = tensor.numel() * tensor.element_size()
        if nbytes == 0:
            raise ValueError("register needs a non-empty tensor")
        with torch.cuda.device(self.device) if self.device is not None else contextlib.nullcontext():
            mem = self._comm.register(tensor.data_ptr(), nbytes)
        buf = SymmetricBuffer(self, mem, tuple(tensor.shape), tensor.dtype, tensor=tensor, registered=True)
        self._buffers.append(buf)
        return buf

    def collectives(self, config=None):
        """This communicator's collectives over torch tensors (``tle.ops.Collectives``:
        all_reduce, all_gather, reduce_scatter, all_to_all, MoE dispatch and
        combine; docs/ops.md), made with ``config`` (``tle.ops.Config``) on the
        first call, which is collective; later calls return the same object."""
        if self._collectives is None:
            from .ops import Collectives
            self._collectives = Collectives(self, config)
        elif config is not None and config.for_comm(self) != self._collectives.config:
            raise ValueError("this communicator's collectives were made with another Config; close them "
                             "(comm.collectives().close()) before asking for a new one")
        return self._collectives

    def get_error(self) -> ErrorInfo | None:
        """Read and clear the device error record (None when there is none)."""
        return self._comm.get_error()

    def job_error(self) -> dict:
        """Every rank's error record merged into one report of the failed
        wait, with the likely culprit (``tle.runtime.Comm.job_error``;
        collective with one process per rank)."""
        return self._comm.job_error()

    def check_error(self) -> None:
        """Raise ``TLEError`` with TLE's report if a kernel recorded an error
        (a barrier wait that timed out, a slot index out of range, ...)."""
        self._comm.check_error()

    def abort(self) -> None:
        """Make every device wait on this communicator give up within the
        check bound (``tleCommAbort``: thread-safe, also while a kernel runs,
        from any thread); afterwards it can only be closed
        (docs/runtime.md, "Faults")."""
        self._comm.abort()

    def synchronize(self) -> None:
        """``torch.cuda.synchronize`` this rank's device, then check TLE's
        error record. A kernel whose barrier wait timed out fails its launch;
        the CUDA error is then reported as ``TLEError`` with TLE's record
        (rank, slot, epoch, missing peers), chained to the CUDA error. (On a
        CPU rank launches are synchronous and raise their device errors
        themselves; this checks the record.)"""
        if self.device is None:
            self.check_error()
            return
        try:
            torch.cuda.synchronize(self.device)
        except RuntimeError as cuda_error:
            info = self._comm.get_error()
            if info is None:
                raise
            raise TLEError(info.result, "device error", info.message, info) from cuda_error
        self.check_error()

    @property
    def closed(self) -> bool:
        return self._comm._handle is None

    def close(self) -> None:
        """Free every buffer still open and destroy the communicator (not
        collective); idempotent."""
        if self.closed:
            return
        for buf in self._buffers:
            buf.close()
        self._buffers.clear()
        self._comm.destroy()

    def __enter__(self) -> Communicator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"dev_comm=0x{self.dev_comm:x}"
        return f"Communicator(rank={self.rank}, size={self.size}, device={self.torch_device}, {state})"


class SharedGpu:
    """``n_ranks`` TLE ranks on one GPU in this process: a communicator per
    rank (``tleCommInitAll`` with ``device`` repeated, the CUDA backend) and
    a CUDA stream per rank, on which ``launch`` starts each rank's kernel,
    so that the ranks' kernels run side by side as on a GPU each.

        with SharedGpu(2) as gpu:
            bufs = gpu.alloc((2, n), torch.float32)        # one buffer per rank
            gpu.launch(kernel, (1,), lambda r: (gpu.ranks[r].dev_comm, bufs[r].handle), N=n,
                       extern_libs=tle.extern_libs())
            gpu.synchronize()

    A barrier's CTAs spin until their peers' arrive, so the ranks' grids must
    be resident at once: ``launch`` compiles the kernel first and refuses
    (ValueError, with the figures) a grid that cannot fit beside the other
    ranks' (``tle.launch.check_co_resident``). One GPU shows the protocol,
    faults and hang reports, not memory-ordering bugs (docs/gpu.md).
    """

    def __init__(self, n_ranks: int, device: int | None = None, *, n_barriers: int = 64,
                 timeout_ms: int | None = None, n_signals: int = 64, n_contexts: int = 4):
        if interpreting():
            raise ValueError("SharedGpu runs kernels compiled for the GPU, but TRITON_INTERPRET=1: unset it, or use "
                             "CPU ranks (python -m tle.launch --ranks N, tle.cpu)")
        if n_ranks < 2:
            raise ValueError(f"SharedGpu needs at least 2 ranks; got {n_ranks}")
        if not torch.cuda.is_available():
            raise RuntimeError("SharedGpu needs a CUDA GPU, and torch sees none")
        self.device = torch.cuda.current_device() if device is None else int(device)
        with torch.cuda.device(self.device):
            comms = Comm.init_all(n_ranks, devices=[self.device] * n_ranks, backend=Backend.CUDA,
                                  n_barriers=n_barriers, timeout_ms=timeout_ms, n_signals=n_signals,
                                  n_contexts=n_contexts)
            #: The ranks' communicators, by rank.
            self.ranks: list[Communicator] = [Communicator(c, self.device) for c in comms]
        for r in self.ranks:
            # tle.ops gives each rank its share of the SMs (its launches'
            # programs must be resident beside the other ranks').
            r.ranks_on_gpu = n_ranks
            #: The ranks' streams, by rank.
            self.streams: list[torch.cuda.Stream] = [torch.cuda.Stream(self.device) for _ in comms]

    @classmethod
    def from_launcher(cls, **kwargs) -> SharedGpu:
        """The ranks ``python -m tle.launch --device cuda --ranks N`` asked
        for (``TLE_LAUNCH_SHARED_RANKS``)."""
        n = os.environ.get(launch.ENV_SHARED_RANKS)
        if not n:
            raise RuntimeError(f"{launch.ENV_SHARED_RANKS} is not set: start this program with python -m "
                               f"tle.launch --device cuda --ranks N")
        return cls(int(n), **kwargs)

    @property
    def size(self) -> int:
        return len(self.ranks)

    def alloc(self, shape: int | Sequence[int], dtype: torch.dtype = torch.float32) -> list[SymmetricBuffer]:
        """A zero-filled symmetric buffer: one per rank, by rank."""
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s <= 0 for s in shape):
            raise ValueError(f"a symmetric buffer needs a non-empty shape; got {shape}")
        nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        with torch.cuda.device(self.device):
            mems = Comm.alloc_all([c._comm for c in self.ranks], nbytes)
        bufs = [SymmetricBuffer(c, m, shape, dtype) for c, m in zip(self.ranks, mems)]
        for c, b in zip(self.ranks, bufs):
            c._buffers.append(b)
        return bufs

    def launch(self, kernel, grid: tuple[int, ...], args_of, **kwargs) -> None:
        """Starts ``kernel[grid](*args_of(rank), **kwargs)`` for every rank,
        each on its stream, after checking that the ranks' grids fit on the
        GPU at once. Returns at once, as a launch does."""
        ctas = math.prod(grid)
        compiled = kernel.warmup(*args_of(0), grid=grid, **kwargs)
        compiled._init_handles()
        props = torch.cuda.get_device_properties(self.device)
        capacity = launch.resident_ctas(
            sms=props.multi_processor_count, threads_per_sm=props.max_threads_per_multi_processor,
            regs_per_sm=props.regs_per_multiprocessor, shared_per_sm=props.shared_memory_per_multiprocessor,
            num_warps=compiled.metadata.num_warps, regs_per_thread=compiled.n_regs,
            shared_per_cta=compiled.metadata.shared)
        launch.check_co_resident(self.size, ctas, capacity, f"{getattr(kernel, '__name__', 'the kernel')}{list(grid)}")
        for rank, stream in enumerate(self.streams):
            with torch.cuda.stream(stream):
                kernel[grid](*args_of(rank), **kwargs)

    def synchronize(self) -> None:
        """Waits for every rank's stream, then checks every rank's record
        (``Communicator.synchronize``)."""
        for rank in self.ranks:
            rank.synchronize()

    def job_error(self) -> dict:
        """Every rank's error record merged into one report of a failed
        wait, with the likely culprit (``tleCommGetJobError``): the ranks
        share this process, so one call reads them all, also while other
        ranks' kernels are still blocked."""
        return self.ranks[0].job_error()

    def close(self) -> None:
        for rank in self.ranks:
            rank.close()

    def __enter__(self) -> SharedGpu:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
