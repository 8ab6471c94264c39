# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE's builtins under Triton's interpreter (``TRITON_INTERPRET=1``).

The interpreter runs a kernel on the CPU with NumPy, one program after
another, and cannot call device bitcode. ``tle.language`` therefore sends
each of its calls here when it finds itself interpreted: the call runs the
host build of TLE's device library in libtle.so through the entry point
``<X>Interp`` that mirrors the bitcode's ``<X>`` (Interp.h), as
program ``tl.program_id`` of the launch's grid, and its result becomes the
interpreter's value. A device error (a wait past its deadline, a slot out of
range, a bad peer) comes back as the error record a GPU would have left, and
is raised as ``TLEError`` at the call.

Nothing here is imported or used when a kernel is compiled for a GPU.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import sys
from typing import Any

from triton import knobs
from triton.language import core

from . import runtime

#: The module of Triton's interpreter, whose builder runs interpreted
#: programs (compared by name so that compiling never imports it).
_INTERPRETER_MODULE = "triton.runtime.interpreter"


#: The first NumPy release that Triton 3.6's interpreter cannot use: from
#: 2.4 on, its ``range()`` over a runtime value fails inside Triton with
#: "TypeError: only 0-dimensional arrays can be converted to Python scalars".
#: The package's requirement (python/pyproject.toml) pins below it.
NUMPY_TOO_NEW = (2, 4)


def check_numpy() -> None:
    """Raises ImportError, saying what to install, when the NumPy in use is
    one that Triton's interpreter (and so every CPU rank) cannot run
    kernels with."""
    import numpy
    version = numpy.__version__
    try:
        major_minor = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:  # a development build: let it try
        return
    if major_minor >= NUMPY_TOO_NEW:
        raise ImportError(
            f"NumPy {version} is installed, but Triton 3.6's interpreter (TRITON_INTERPRET=1, which runs kernels on "
            f"CPU ranks) fails with NumPy {NUMPY_TOO_NEW[0]}.{NUMPY_TOO_NEW[1]} and later (\"only 0-dimensional "
            f"arrays can be converted to Python scalars\" at a range() over a runtime value): "
            f"pip install 'numpy>=1.26,<{NUMPY_TOO_NEW[0]}.{NUMPY_TOO_NEW[1]}'")


def interpreting() -> bool:
    """True when Triton interprets kernels (``TRITON_INTERPRET=1``): then
    ``@triton.jit`` builds interpreted functions, which call TLE's builtins
    without a ``_semantic``."""
    return bool(knobs.runtime.interpret)


def is_interpreter(semantic: Any) -> bool:
    """Whether ``semantic`` builds values for the interpreter."""
    return type(getattr(semantic, "builder", None)).__module__ == _INTERPRETER_MODULE


def semantic() -> Any:
    """The interpreter's semantic, over the builder that runs the current
    program (its ``grid_idx`` and ``grid_dim`` are the program and grid)."""
    from triton.runtime import interpreter
    return interpreter.interpreter_semantic


def program(semantic: Any) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(program id, grid) of the program the interpreter is running."""
    builder = semantic.builder
    grid_idx = getattr(builder, "grid_idx", None)
    if grid_idx is None:
        raise RuntimeError("TLE's functions run under Triton's interpreter only inside a kernel launch")
    return tuple(grid_idx), tuple(builder.grid_dim)


class _Program(ctypes.Structure):
    """tleInterpProgram."""
    _fields_ = [("blockIdx", ctypes.c_uint32 * 3), ("gridDim", ctypes.c_uint32 * 3)]


_C_TYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64}


@functools.lru_cache(maxsize=None)
def _entry_point(symbol: str, arg_types: tuple[str, ...], ret: str):
    """``<X>Interp`` for the Triton entry point ``<X>`` (Interp.h derives
    one from each of abi.def's TLE_ABI_TRITON_FUNCTION), typed from ``<X>``'s
    signature: (program, its arguments, out, outError)."""
    if not symbol.startswith("tle"):
        raise ValueError(f"not a TLE entry point: {symbol}")
    name = symbol + "Interp"
    try:
        fn = getattr(runtime.library(), name)
    except AttributeError:
        raise RuntimeError(f"{runtime.library()._name} has no {name}: it predates the Triton entry point "
                           f"{symbol} (or Triton's interpreter support); rebuild libtle") from None
    fn.restype = ctypes.c_int
    fn.argtypes = ([ctypes.POINTER(_Program)] + [_C_TYPES[t] for t in arg_types] +
                   [ctypes.POINTER(_C_TYPES[ret]), ctypes.POINTER(runtime._ErrorInfo)])
    return fn


class Constant:
    """A compile-time argument of an interpreted call (tle.language's
    ``_constant``): its value and type, without the interpreter's scalar
    tensor, whose making cost more than the call."""

    __slots__ = ("value", "dtype")

    def __init__(self, value: int, dtype: core.dtype):
        self.value, self.dtype = value, dtype

    @property
    def type(self) -> core.dtype:
        """A scalar's type is its dtype (as a scalar tensor's): the
        interpreter types the tuples a session travels in by it."""
        return self.dtype


def _value(arg: core.tensor | Constant) -> int:
    """The Python value of an interpreted scalar."""
    if type(arg) is Constant:
        return arg.value
    data = arg.handle.data
    if data.size != 1:
        raise TypeError(f"expected a scalar, got a block of shape {list(data.shape)}")
    return int(data.reshape(-1)[0])


@functools.lru_cache(maxsize=None)
def _numpy_checked() -> None:
    """check_numpy once per process, at the first interpreted TLE call (a
    kernel on torch CPU tensors does not import tle.cpu)."""
    check_numpy()


def call(symbol: str, args: list[core.tensor | Constant], ret: core.dtype, semantic: Any,
         result: bool = True) -> core.tensor | None:
    """Runs the device library's ``symbol`` with the interpreted scalars
    ``args`` as the current program; returns its result as an interpreted
    scalar of type ``ret`` (None when not ``result``: the caller drops
    it), or raises ``TLEError`` with the device record."""
    _numpy_checked()
    arg_types = tuple(a.dtype.name for a in args)
    fn = _entry_point(symbol, arg_types, ret.name)
    pid, grid = program(semantic)
    prog = _Program((ctypes.c_uint32 * 3)(*pid), (ctypes.c_uint32 * 3)(*grid))
    out = _C_TYPES[ret.name]()
    info = runtime._ErrorInfo()
    if _checking is not None:
        _checking.tleInterpCheckSite(_site())
    code = fn(ctypes.byref(prog), *(_value(a) for a in args), ctypes.byref(out), ctypes.byref(info))
    if code != runtime.Result.SUCCESS:
        if info.result == runtime.Result.SUCCESS:  # refused before it ran: a bad argument of ours
            runtime._check(code, symbol)
        record = runtime._error_info(info)
        raise runtime.TLEError(record.result, "device error", record.message, record)
    return semantic.scalar_constant(out.value, ret) if result else None


def check_grid_group(semantic: Any) -> None:
    """The grid group needs every program of the rank at the barrier at
    once; the interpreter runs them one after another, so only a grid of
    one program can form it."""
    _, grid = program(semantic)
    programs = grid[0] * grid[1] * grid[2]
    if programs != 1:
        raise ValueError(f"group_kind 'grid' under Triton's interpreter (TRITON_INTERPRET=1) needs a grid of one "
                         f"program: the interpreter runs the programs of a rank one after another, so they cannot "
                         f"wait for each other (this launch has {programs} programs); on the CPU launch one "
                         f"program, or use group_kind 'block' with one slot per program")


# -- Race and slot checks (python -m tle.launch; runtime/host/emu/InterpCheck.h)
#
# Each rank records what the checkers need into a file of events: the
# interpreter's loads, stores and atomics (the builder's methods below,
# wrapped), the device library's barrier events, signals and acquire loads
# (libtle's hooks), each access with the Python line it comes from. The
# launcher replays every rank's file through the emulator's race and slot
# checkers when the ranks have ended.

from .launch import ENV_CHECK_DIR  # noqa: E402 (set by python -m tle.launch unless --no-check)

_checking: Any = None  # libtle while this process records
_ACCESS_LOAD, _ACCESS_STORE, _ACCESS_ATOMIC_LOAD, _ACCESS_ATOMIC_UPDATE = 0, 1, 2, 4  # tle/abi.def's AccessKind
_ORDER_RELAXED = 0
#: Files whose frames are not the kernel's: a report names the first frame
#: outside them (the kernel's line, or its @triton.jit helper's).
# tle.language and tle.flagtree's builtins: a report names the kernel's line
# that called them, not theirs.
_NOT_KERNEL = {__file__, os.path.join(os.path.dirname(__file__), "language.py"),
               os.path.join(os.path.dirname(__file__), "flagtree", "language.py")}


def _check_library():
    lib = runtime.library()
    protos = {
        "tleInterpCheckStart": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int32]),
        "tleInterpCheckStop": (None, []),
        "tleInterpCheckLaunch": (None, []),
        "tleInterpCheckProgram": (None, [ctypes.c_uint32]),
        "tleInterpCheckSite": (None, [ctypes.c_char_p]),
        "tleInterpCheckAccess": (None, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int32,
                                        ctypes.c_int32]),
        "tleInterpCheckLock": (None, []),
        "tleInterpCheckUnlock": (None, []),
        "tleInterpCheckName": (None, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p]),
        "tleInterpCheckRun": (ctypes.c_int64, [ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_uint64]),
    }
    for name, (restype, argtypes) in protos.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise RuntimeError(f"{lib._name} has no {name}: it predates the interpreter's race checks; rebuild "
                               f"libtle (or run python -m tle.launch --no-check)") from None
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def start_checks(rank: int) -> bool:
    """Starts recording this rank's events when ``tle.launch`` asked for the
    checks (``TLE_LAUNCH_CHECK_DIR``); whether it records."""
    global _checking
    directory = os.environ.get(ENV_CHECK_DIR)
    if _checking is not None or not directory:
        return _checking is not None
    lib = _check_library()
    if lib.tleInterpCheckStart(directory.encode(), rank) != runtime.Result.SUCCESS:
        raise RuntimeError(f"cannot record the race checks' events in {directory} ({ENV_CHECK_DIR})")
    _checking = lib
    _wrap_builder(lib)
    atexit.register(lib.tleInterpCheckStop)
    return True


def name_buffer(address: int, nbytes: int, name: str) -> None:
    """This rank's copy of a symmetric buffer, at ``address``, is ``name`` in
    the race reports."""
    if _checking is not None:
        _checking.tleInterpCheckName(address, nbytes, name.encode())


@functools.lru_cache(maxsize=None)
def _shown(filename: str) -> str | None:
    """How a report names ``filename``: relative to the working directory
    when below it; None for the frames of Triton and of this glue."""
    import triton
    if filename.startswith(os.path.dirname(triton.__file__) + os.sep) or filename in _NOT_KERNEL:
        return None
    rel = os.path.relpath(filename)
    return filename if rel.startswith("..") else rel


def _site() -> bytes | None:
    """The kernel's line that is running: the first frame outside Triton and
    TLE's interpreter glue."""
    frame = sys._getframe(2)
    while frame is not None:
        shown = _shown(frame.f_code.co_filename)
        if shown is not None:
            return f"{shown}:{frame.f_lineno}".encode()
        frame = frame.f_back
    return None


def _record(lib, ptrs, mask, kind: int, order: int) -> None:
    import numpy as np
    data = ptrs.data
    addrs = data.reshape(-1) if mask is None else data[np.broadcast_to(mask.data, data.shape)]
    if addrs.size == 0:
        return
    addrs = np.ascontiguousarray(addrs, dtype=np.uint64)
    size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    lib.tleInterpCheckSite(_site())
    lib.tleInterpCheckAccess(addrs.ctypes.data, addrs.size, size, kind, order)


def _wrap_builder(lib) -> None:
    """Wraps the methods of Triton 3.6's interpreter builder that start a
    launch, run a program and access memory, so that each is recorded."""
    from triton._C.libtriton import ir
    from triton.runtime import interpreter
    b = interpreter.interpreter_builder
    orders = {ir.MEM_SEMANTIC.RELAXED: 0, ir.MEM_SEMANTIC.ACQUIRE: 1, ir.MEM_SEMANTIC.RELEASE: 2,
              ir.MEM_SEMANTIC.ACQUIRE_RELEASE: 3}

    def order_of(sem) -> int:  # a MemoryOrder (tle/abi.def); acq_rel when Triton adds a kind
        return orders.get(sem, 3)

    set_grid_dim, set_grid_idx = b.set_grid_dim, b.set_grid_idx
    load, store, rmw, cas = b.create_masked_load, b.create_masked_store, b.create_atomic_rmw, b.create_atomic_cas

    def grid_dim(nx, ny, nz):
        set_grid_dim(nx, ny, nz)
        lib.tleInterpCheckLaunch()

    def grid_idx(x, y, z):
        set_grid_idx(x, y, z)
        nx, ny, _ = b.grid_dim
        lib.tleInterpCheckProgram(x + nx * (y + ny * z))

    def masked_load(ptrs, mask, other, cache_modifier, eviction_policy, is_volatile):
        # A volatile load is PTX's ld.volatile, a relaxed system-scope
        # atomic load: it does not race with other atomics (a flag polled
        # with volatile loads and stored with relaxed atomics), and orders
        # nothing.
        _record(lib, ptrs, mask, _ACCESS_ATOMIC_LOAD if is_volatile else _ACCESS_LOAD, _ORDER_RELAXED)
        return load(ptrs, mask, other, cache_modifier, eviction_policy, is_volatile)

    def masked_store(ptrs, value, mask, *rest):
        out = store(ptrs, value, mask, *rest)
        _record(lib, ptrs, mask, _ACCESS_STORE, _ORDER_RELAXED)
        return out

    # An atomic and its record under the ranks' shared lock: the records'
    # order is then the atomics' (InterpCheck.h).
    def atomic_rmw(op, ptr, val, mask, sem, scope):
        lib.tleInterpCheckLock()
        try:
            out = rmw(op, ptr, val, mask, sem, scope)
            _record(lib, ptr, mask, _ACCESS_ATOMIC_UPDATE, order_of(sem))
        finally:
            lib.tleInterpCheckUnlock()
        return out

    def atomic_cas(ptr, cmp, val, sem, scope):
        lib.tleInterpCheckLock()
        try:
            out = cas(ptr, cmp, val, sem, scope)
            _record(lib, ptr, None, _ACCESS_ATOMIC_UPDATE, order_of(sem))
        finally:
            lib.tleInterpCheckUnlock()
        return out

    b.set_grid_dim, b.set_grid_idx = grid_dim, grid_idx
    b.create_masked_load, b.create_masked_store = masked_load, masked_store
    b.create_atomic_rmw, b.create_atomic_cas = atomic_rmw, atomic_cas


def run_checks(directory: str, ranks: int) -> tuple[int, str]:
    """Replays the event files of ``ranks`` ranks in ``directory``: (how many
    misuses, their reports); (-1, why) when a file cannot be read."""
    lib = _check_library()
    buf = ctypes.create_string_buffer(1 << 16)
    found = lib.tleInterpCheckRun(directory.encode(), ranks, buf, len(buf))
    return found, buf.value.decode(errors="replace")
