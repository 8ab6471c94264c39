# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What every host-level operation of ``tle.ops`` shares: the workspace (the
symmetric staging buffers, the flag-in-data buffer and the device-resident
counters of one communicator), the arrays it accepts (torch tensors on a
``tle.torch`` communicator, NumPy arrays on a ``tle.cpu`` one), the checks
whose errors name the tensor and the constraint, and the launch.

Nothing here synchronizes with the host: a call validates shapes and dtypes
(host metadata), picks a variant and launches, so every operation can be
captured in a CUDA graph and replayed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from .. import extern_libs
from .._interp import interpreting
from .device import KINDS

#: Reductions, by name (``op=``), to the kernels' ``OP`` code.
REDUCE_OPS = {"sum": 0, "max": 1, "min": 2}
#: Element types the collectives take, by name.
DTYPES = ("float32", "bfloat16", "float16")
#: Program slots of the device counters: at most this many programs per
#: launch (and barrier slots ``slot_base .. slot_base + programs - 1``).
MAXG = 256
#: Byte alignment of every region inside a staging half.
ALIGN = 256


@dataclass(frozen=True)
class Config:
    """How a ``Collectives`` workspace launches and what it holds.

    ``programs``: programs (CTAs) per launch, one barrier slot each
    (``slot_base + programs`` must not exceed the communicator's
    ``n_barriers``); ``block``: elements per program per step;
    ``num_warps``: warps per program. 0 picks the default: 2 programs of 64
    under Triton's interpreter (CPU ranks); on GPUs blocks of 4096 with 8
    warps, and one program per SM (its share where ranks share the GPU) as
    far as the communicator's slots from ``slot_base`` reach (a launch's
    programs wait for the peers' and must all be resident at once).
    Measured on one H200 (docs/ops.md, "Launch shape"), 132 x 4096 moved
    54-96% of ``copy_``'s bandwidth on the local paths, the earlier default
    of 32 x 2048 only 10-26%; ``tle.torch`` communicators have 256 slots
    by default, so that they get the full width.
    ``stage_bytes``: bytes of each of the two staging halves (larger
    messages run in several launches); ``ll_bytes``: the largest message of
    the flag-in-data all-reduce. ``oneshot_max_bytes`` / ``ll_max_bytes``:
    the sizes up to which ``all_reduce`` picks those variants when none is
    asked for (two-shot above). ``slot_base``: the first barrier slot the
    workspace uses; ``signal_base``: the first signal word (MoE uses 3).
    """
    programs: int = 0
    block: int = 0
    num_warps: int = 0
    stage_bytes: int = 8 << 20
    ll_bytes: int = 256 << 10
    ll_max_bytes: int = 64 << 10
    oneshot_max_bytes: int = 1 << 20
    slot_base: int = 0
    signal_base: int = 0

    def resolved(self, n_barriers: int | None = None, sm_count: int | None = None) -> Config:
        """The defaults filled in for this process (interpreter or GPU), a
        communicator of ``n_barriers`` slots (None: unknown, taken as 64,
        the communicators' default) and a GPU of ``sm_count`` SMs (None:
        132, an H200's)."""
        cpu = interpreting()
        slots = (64 if n_barriers is None else n_barriers) - self.slot_base
        sms = 132 if sm_count is None else sm_count
        cfg = replace(self, programs=self.programs or (2 if cpu else max(1, min(MAXG, slots, sms))),
                      block=self.block or (64 if cpu else 4096), num_warps=self.num_warps or (1 if cpu else 8))
        if not 1 <= cfg.programs <= MAXG:
            raise ValueError(f"Config.programs must be in 1..{MAXG}; got {cfg.programs}")
        if n_barriers is not None and cfg.slot_base + cfg.programs > n_barriers:
            raise ValueError(f"Config.slot_base + programs ({cfg.slot_base} + {cfg.programs}) exceeds the "
                             f"communicator's {n_barriers} barrier slots: pass n_barriers="
                             f"{cfg.slot_base + cfg.programs} (or more) to the communicator, or fewer programs")
        if cfg.block < 16 or cfg.block & (cfg.block - 1):
            raise ValueError(f"Config.block must be a power of two of at least 16; got {cfg.block}")
        for name in ("stage_bytes", "ll_bytes"):
            if getattr(cfg, name) < ALIGN:
                raise ValueError(f"Config.{name} must be at least {ALIGN} bytes; got {getattr(cfg, name)}")
        # Every region starts at a multiple of ALIGN (device.typed relies on it).
        return replace(cfg, stage_bytes=_round_up(cfg.stage_bytes), ll_bytes=_round_up(cfg.ll_bytes))


    def for_comm(self, comm: Any) -> Config:
        """``resolved`` for communicator ``comm`` (``tle.torch`` or
        ``tle.cpu``): its slots and its GPU's SMs."""
        return self.resolved(getattr(comm, "n_barriers", None), Arrays(comm).sm_count())


def _round_up(n: int, to: int = ALIGN) -> int:
    return (n + to - 1) // to * to


class Arrays:
    """The array library of a communicator: torch for ``tle.torch``, NumPy
    for ``tle.cpu``. Everything the operations do to arrays on the host goes
    through here (allocate, view, check), so that one code path serves
    both."""

    def __init__(self, comm: Any):
        self.torch = None
        if type(comm).__module__ == "tle.torch":
            import torch
            self.torch = torch
            self.device = comm.torch_device
            self.ranks_on_gpu = getattr(comm, "ranks_on_gpu", 1)
        else:
            import numpy as np
            self.np = np

    def sm_count(self) -> int | None:
        """SMs of this rank's GPU (its share, where ranks share the GPU);
        None on CPU ranks."""
        if self.torch is None or self.device.type != "cuda":
            return None
        sms = self.torch.cuda.get_device_properties(self.device).multi_processor_count
        return max(1, sms // self.ranks_on_gpu)

    def dtype_name(self, a: Any) -> str:
        if self.torch is not None:
            return str(a.dtype).replace("torch.", "")
        return a.dtype.name

    def dtype_of(self, name: str) -> Any:
        if self.torch is not None:
            return getattr(self.torch, name)
        if name == "bfloat16":
            raise TypeError("NumPy has no bfloat16: on CPU ranks use float32 or float16")
        return self.np.dtype(name)

    def check(self, name: str, a: Any, dtypes: tuple[str, ...] = DTYPES) -> None:
        """``a`` is an array of this library, on this rank's device,
        contiguous, non-empty and of one of ``dtypes``; else a TypeError or
        ValueError that names it."""
        kind = "torch.Tensor" if self.torch is not None else "NumPy array"
        if self.torch is not None:
            if not isinstance(a, self.torch.Tensor):
                raise TypeError(f"{name} must be a {kind}; got {type(a).__name__}")
            if a.device != self.device:
                raise ValueError(f"{name} is on {a.device}, but the communicator is on {self.device}")
            contiguous = a.is_contiguous()
        else:
            if not isinstance(a, self.np.ndarray):
                raise TypeError(f"{name} must be a {kind}; got {type(a).__name__}")
            contiguous = a.flags.c_contiguous
        if self.dtype_name(a) not in dtypes:
            raise TypeError(f"{name} has dtype {self.dtype_name(a)}; expected one of {', '.join(dtypes)}")
        if not contiguous:
            raise ValueError(f"{name} must be contiguous")
        if self.numel(a) == 0:
            raise ValueError(f"{name} is empty")

    def numel(self, a: Any) -> int:
        return a.numel() if self.torch is not None else a.size

    def element_size(self, a: Any) -> int:
        return a.element_size() if self.torch is not None else a.itemsize

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        if self.torch is not None:
            return self.torch.empty(shape, dtype=dtype, device=self.device)
        return self.np.empty(shape, dtype)

    def flat(self, a: Any) -> Any:
        return a.reshape(-1)

    def arg(self, a: Any) -> Any:
        """``a`` as a kernel's pointer argument."""
        if self.torch is not None:
            return a
        from ..cpu import Tensor
        return Tensor(a)

    def same_memory(self, a: Any, b: Any) -> bool:
        if self.torch is not None:
            return a.data_ptr() == b.data_ptr()
        return a.ctypes.data == b.ctypes.data


class Workspace:
    """The symmetric memory and device counters of one communicator's
    collectives (see ``tle.ops.Collectives``, which owns one)."""

    def __init__(self, comm: Any, config: Config | None = None):
        self.comm = comm
        self.arrays = Arrays(comm)
        self.config = (config or Config()).for_comm(comm)
        self.rank, self.size = comm.rank, comm.size
        self.interp = interpreting()
        cfg = self.config
        u8, i64 = self.arrays.dtype_of("uint8"), self.arrays.dtype_of("int64")
        #: Two staging halves (call e uses half e % 2).
        self.stage = comm.alloc((2 * cfg.stage_bytes,), u8)
        #: Flag-in-data words: [half][source][words], a word per element.
        self.ll_words = cfg.ll_bytes // 4
        self.ll = comm.alloc((2 * self.size * self.ll_words,), i64)
        #: Device counters, [kind][program slot], read and advanced by the
        #: kernels only.
        self.state = comm.alloc((KINDS * MAXG,), i64)
        #: Looked up once: a launch should cost no file system calls.
        self.extern_libs = extern_libs()
        self.state_arg = self.arrays.arg(self.state.tensor if self.arrays.torch is not None else self.state.array)

    def programs_for(self, n: int, blocks_per_step: int = 1) -> int:
        """Programs for ``n`` elements: one per step of ``block x
        blocks_per_step`` elements, at most ``Config.programs`` (a small
        message takes few programs; the device counters stay consistent
        whatever the grid, see ``device.advance``)."""
        per = self.config.block * blocks_per_step
        return max(1, min(self.config.programs, -(-n // per)))

    def launch(self, kernel, programs: int | None, *args, **constexprs) -> None:
        """``kernel[(programs,)](dev_comm, *args, MAXG, INTERP, ...)``."""
        cfg = self.config
        programs = programs or cfg.programs
        kernel[(programs,)](self.comm.dev_comm, *args, MAXG=MAXG, INTERP=self.interp, num_warps=cfg.num_warps,
                            extern_libs=self.extern_libs, **constexprs)

    def close(self) -> None:
        for buf in (self.stage, self.ll, self.state):
            buf.close()


def chunks(total: int, per: int):
    """(start, length) of consecutive pieces of at most ``per``."""
    per = max(1, per)
    for start in range(0, total, per):
        yield start, min(per, total - start)


def reduce_code(op: str) -> int:
    if op not in REDUCE_OPS:
        raise ValueError(f"op must be one of {', '.join(map(repr, REDUCE_OPS))}; got {op!r}")
    return REDUCE_OPS[op]


def prod(shape) -> int:
    return math.prod(shape)
