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

import ctypes
import functools
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


def _value(arg: core.tensor) -> int:
    """The Python value of an interpreted scalar."""
    data = arg.handle.data
    if data.size != 1:
        raise TypeError(f"expected a scalar, got a block of shape {list(data.shape)}")
    return int(data.reshape(-1)[0])


@functools.lru_cache(maxsize=None)
def _numpy_checked() -> None:
    """check_numpy once per process, at the first interpreted TLE call (a
    kernel on torch CPU tensors does not import tle.cpu)."""
    check_numpy()


def call(symbol: str, args: list[core.tensor], ret: core.dtype, semantic: Any) -> core.tensor:
    """Runs the device library's ``symbol`` with the interpreted scalars
    ``args`` as the current program; returns its result as an interpreted
    scalar of type ``ret``, or raises ``TLEError`` with the device record."""
    _numpy_checked()
    arg_types = tuple(a.dtype.name for a in args)
    fn = _entry_point(symbol, arg_types, ret.name)
    pid, grid = program(semantic)
    prog = _Program((ctypes.c_uint32 * 3)(*pid), (ctypes.c_uint32 * 3)(*grid))
    out = _C_TYPES[ret.name]()
    info = runtime._ErrorInfo()
    code = fn(ctypes.byref(prog), *(_value(a) for a in args), ctypes.byref(out), ctypes.byref(info))
    if code != runtime.Result.SUCCESS:
        if info.result == runtime.Result.SUCCESS:  # refused before it ran: a bad argument of ours
            runtime._check(code, symbol)
        record = runtime._error_info(info)
        raise runtime.TLEError(record.result, "device error", record.message, record)
    return semantic.scalar_constant(out.value, ret)


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
