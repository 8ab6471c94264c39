# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE communicators and symmetric buffers on CPU ranks, without PyTorch.

For kernels run by Triton's interpreter (``TRITON_INTERPRET=1``), one
process per rank, started by TLE's launcher (``python -m tle.launch --ranks
N script.py``). The communicator uses the emulator backend: every symmetric
buffer is shared memory mapped into every rank, so the interpreter's loads
and stores through ``intra_pointer`` reach the peers' copies directly.
Buffers are NumPy arrays; ``Communicator.register`` makes an array of
``shareable_array`` a symmetric buffer without a copy. ``Tensor`` makes any
NumPy array a pointer argument the interpreter accepts, as it accepts torch
tensors::

    import numpy as np
    from tle.cpu import Communicator, Tensor

    with Communicator.from_launcher() as comm:
        out = comm.alloc((comm.size, n), np.float32)     # symmetric buffer
        x = Tensor(np.full(n, comm.rank, np.float32))    # an ordinary argument
        kernel[(1,)](comm.dev_comm, out.handle, x, N=n, extern_libs=tle.extern_libs())
        comm.synchronize()
        print(out.array)
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
import weakref
from typing import Sequence

import numpy as np

from . import _interp
from ._interp import check_numpy, interpreting
from .launch import ENV_RANK, ENV_RANKS_PER_NODE, ENV_SIZE, ENV_UNIQUE_ID
from .runtime import Backend, Comm, ErrorInfo, Mem, OnError, TLEError, shareable_alloc, shareable_free

__all__ = ["Communicator", "SymmetricBuffer", "Tensor", "TLEError", "shareable_array"]

check_numpy()


class _Storage:
    """What Triton's interpreter asks of a tensor's storage: the array is
    host memory already, so "copying it to the CPU" is the array itself, and
    the launch's loads and stores land in it directly."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def cpu(self) -> _Storage:
        return self

    def copy_(self, other: _Storage) -> None:
        if other.array is not self.array:
            np.copyto(self.array, other.array)


class Tensor:
    """A NumPy array as a pointer argument of an interpreted Triton kernel.

    Triton's interpreter takes a pointer argument from anything with
    ``data_ptr()`` and a ``dtype``, and copies it to the host and back
    through the storage methods of a torch tensor; ``Tensor`` answers them
    with the array itself, so kernels read and write ``numpy()`` in place.
    """

    def __init__(self, array: np.ndarray):
        array = np.asarray(array)
        if not array.flags.c_contiguous:
            raise ValueError("a Tensor needs a C-contiguous array (Triton addresses elements as base + offset)")
        self._array = array

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    def numpy(self) -> np.ndarray:
        """The array (not a copy)."""
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        return f"tle.cpu.Tensor({self._array!r})"

    def data_ptr(self) -> int:
        return self._array.ctypes.data

    def element_size(self) -> int:
        return self._array.itemsize

    # The torch-tensor methods GridExecutor (triton/runtime/interpreter.py,
    # Triton 3.6) calls to stage arguments on the host and copy them back.
    def untyped_storage(self) -> _Storage:
        return _Storage(self._array)

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple[int, ...]:
        return self._array.shape

    def stride(self) -> tuple[int, ...]:
        return tuple(s // self._array.itemsize for s in self._array.strides)

    def new_empty(self, *shape: int, device=None) -> Tensor:
        return Tensor(np.empty(shape, self._array.dtype))

    def set_(self, storage: _Storage, offset: int, size: Sequence[int], stride: Sequence[int]) -> Tensor:
        base = storage.array
        if offset == 0 and tuple(size) == base.shape and tuple(stride) == Tensor(base).stride():
            self._array = base
        else:
            item = base.itemsize
            flat = base.reshape(-1)
            self._array = np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(size),
                                                          strides=tuple(s * item for s in stride))
        return self


def shareable_array(shape: int | Sequence[int], dtype=np.float32) -> np.ndarray:
    """A zero-filled NumPy array in memory that the peers' processes can map
    once it is registered (``Communicator.register``): host memory from
    ``tleShareableAlloc`` (a memory file), freed when the array and every
    view of it are gone."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    nbytes = max(math.prod(shape) * dtype.itemsize, 1)
    address = shareable_alloc(nbytes, -1)
    raw = (ctypes.c_char * nbytes).from_address(address)
    # The array refers to `raw`; the memory goes when `raw` does.
    weakref.finalize(raw, shareable_free, address, -1)
    return np.frombuffer(raw, dtype=dtype, count=math.prod(shape)).reshape(shape)


class SymmetricBuffer:
    """A symmetric buffer of one rank: the same shape and dtype on every
    rank, each rank's copy mapped into every peer.

    ``array`` is this rank's copy as a NumPy array, ``tensor`` the same as a
    kernel argument, ``handle`` the kernels' ``mem`` argument for
    ``tle.language.local_pointer`` / ``intra_pointer``. The memory is freed
    by ``close()`` (or ``Communicator.close()``); arrays still referring to
    it must not be used afterwards.
    """

    def __init__(self, mem: Mem, shape: tuple[int, ...], dtype: np.dtype, array: np.ndarray | None = None):
        self._mem = mem
        self.shape = shape
        self.dtype = dtype
        #: A registration (``Communicator.register``): the memory is the
        #: user's array, which this buffer keeps alive until it is closed.
        self.registered = array is not None
        if array is None:
            raw = (ctypes.c_char * mem.nbytes).from_address(mem.local_ptr)
            array = np.frombuffer(raw, dtype=dtype).reshape(shape)
        self.array: np.ndarray = array
        self.tensor = Tensor(self.array)
        #: Address of the buffer's device handle (``tleMemGetHandle``).
        self.handle: int = mem.dev_handle

    @property
    def nbytes(self) -> int:
        return self._mem.nbytes

    @property
    def closed(self) -> bool:
        return self._mem.freed

    def close(self) -> None:
        """Free this rank's handle (not collective); idempotent."""
        self._mem.free()

    def __enter__(self) -> SymmetricBuffer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Communicator:
    """A TLE communicator over CPU ranks, one rank per process, with the
    emulator backend."""

    def __init__(self, comm: Comm):
        self._comm = comm
        self._buffers: list[SymmetricBuffer] = []
        self._collectives = None
        self.rank = comm.rank
        self.size = comm.size
        #: Barrier slots per rank (None if unknown).
        self.n_barriers = comm.n_barriers
        #: Address of the device communicator: the kernels' ``comm`` argument.
        self.dev_comm: int = comm.dev_comm

    @classmethod
    def init_rank(cls, size: int, unique_id: bytes, rank: int, *, n_barriers: int = 64,
                  timeout_ms: int | None = None, bootstrap_timeout_ms: int | None = None,
                  n_signals: int = 64, on_error: OnError = OnError.DEFAULT,
                  ranks_per_node: int | None = None, n_contexts: int = 4) -> Communicator:
        """Rank ``rank`` of ``size`` processes that share ``unique_id``
        (``tle.runtime.get_unique_id()`` on one of them). Collective.
        ``n_signals``: signal words per rank and network context (``index``
        of the signal functions must be below it); ``n_contexts``: network
        contexts (``context`` of the signal functions), each with its own
        words. ``on_error``: what a failed barrier or
        signal wait does (``tle.runtime.OnError``). ``ranks_per_node``:
        simulated nodes of that many ranks (``rank`` and ``size`` are the
        world's; buffers span a node)."""
        return cls(Comm.init_rank(size, unique_id, rank, 0, backend=Backend.EMULATOR, n_barriers=n_barriers,
                                  timeout_ms=timeout_ms, bootstrap_timeout_ms=bootstrap_timeout_ms,
                                  n_signals=n_signals, on_error=on_error, ranks_per_node=ranks_per_node,
                                  n_contexts=n_contexts))

    @classmethod
    def from_launcher(cls, *, n_barriers: int = 64, timeout_ms: int | None = None,
                      bootstrap_timeout_ms: int | None = None, n_signals: int = 64,
                      n_contexts: int = 4) -> Communicator:
        """This process's rank of a ``python -m tle.launch`` run (collective
        over its ranks). ``timeout_ms``: the barrier deadline; None takes
        ``TLE_BARRIER_TIMEOUT_MS`` or 10 s, 0 waits forever."""
        if not interpreting():
            raise RuntimeError("CPU ranks run Triton kernels under Triton's interpreter only: TRITON_INTERPRET=1 "
                               "(python -m tle.launch sets it unless it is set already)")
        try:
            rank, size = int(os.environ[ENV_RANK]), int(os.environ[ENV_SIZE])
            unique_id = bytes.fromhex(os.environ[ENV_UNIQUE_ID])
        except KeyError as e:
            raise RuntimeError(f"{e.args[0]} is not set: start this script with "
                               f"python -m tle.launch --ranks N {os.path.basename(sys.argv[0])}") from None
        per_node = os.environ.get(ENV_RANKS_PER_NODE)
        # The launcher's race and slot checks (docs/triton.md): this rank
        # records its kernels' events from here on.
        _interp.start_checks(rank)
        return cls.init_rank(size, unique_id, rank, n_barriers=n_barriers, timeout_ms=timeout_ms,
                             bootstrap_timeout_ms=bootstrap_timeout_ms, n_signals=n_signals,
                             ranks_per_node=int(per_node) if per_node else None, n_contexts=n_contexts)

    def alloc(self, shape: int | Sequence[int], dtype=np.float32) -> SymmetricBuffer:
        """A zero-filled symmetric buffer (collective: every rank calls it
        with the same shape and dtype)."""
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s <= 0 for s in shape):
            raise ValueError(f"a symmetric buffer needs a non-empty shape; got {shape}")
        dtype = np.dtype(dtype)
        buf = SymmetricBuffer(self._comm.alloc(math.prod(shape) * dtype.itemsize), shape, dtype)
        self._name(buf)
        return buf

    def _name(self, buf: SymmetricBuffer) -> None:
        """Keeps ``buf``, and names it in the race reports: its number among
        this communicator's buffers, dtype and shape."""
        _interp.name_buffer(buf.array.ctypes.data, buf.nbytes,
                            f"buffer {len(self._buffers)} {buf.dtype}{list(buf.shape)}")
        self._buffers.append(buf)

    def register(self, array: np.ndarray | Tensor) -> SymmetricBuffer:
        """``array``'s existing memory as a symmetric buffer (collective:
        every rank registers an array of the same size in bytes). Ranks in
        separate processes can only map memory of ``shareable_array``; any
        other array is refused (every rank fails, with the reason). Closing
        the buffer unmaps the peers' copies and leaves the array alone."""
        if isinstance(array, Tensor):
            array = array.numpy()
        if not isinstance(array, np.ndarray):
            raise TypeError(f"register needs a NumPy array; got {type(array).__name__}")
        if not array.flags.c_contiguous:
            raise ValueError("register needs a C-contiguous array: kernels address its copies as base + offset")
        if array.nbytes == 0:
            raise ValueError("register needs a non-empty array")
        buf = SymmetricBuffer(self._comm.register(array.ctypes.data, array.nbytes), array.shape, array.dtype,
                              array=array)
        self._name(buf)
        return buf

    def collectives(self, config=None):
        """This communicator's collectives over NumPy arrays (``tle.ops.Collectives``:
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
        """Raise ``TLEError`` with TLE's report if a kernel recorded an error."""
        self._comm.check_error()

    def trace_start(self, capacity: int = 0) -> None:
        """Record this rank's barrier events (``Comm.trace_start``): call it
        before the launches, then ``write_trace`` before ``trace_stop``."""
        self._comm.trace_start(capacity)

    def write_trace(self, path: str | os.PathLike) -> None:
        """Write what this rank recorded since the last write to ``path``, a
        Chrome/Perfetto JSON trace (one file per rank: each rank is its own
        process); ``TLEError`` when nothing is being recorded."""
        Comm.write_trace([self._comm], path)

    def trace_stop(self) -> None:
        """Stop recording and drop the events not yet written."""
        self._comm.trace_stop()

    def abort(self) -> None:
        """``tleCommAbort``: every barrier on this communicator gives up;
        afterwards it can only be closed."""
        self._comm.abort()

    def synchronize(self) -> None:
        """Interpreted launches are synchronous and raise their device errors
        themselves; this checks the record, as on GPUs."""
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
        return f"tle.cpu.Communicator(rank={self.rank}, size={self.size}, {state})"
