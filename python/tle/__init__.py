# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE for Triton: a device-side intra-node barrier usable in stock Triton.

``tle.language`` holds the functions called inside ``@triton.jit`` kernels;
they compile to calls into TLE's device bitcode, which every launch must link
with ``extern_libs=tle.extern_libs()``, and under Triton's interpreter
(``TRITON_INTERPRET=1``) they call the host build of the same library.
``tle.runtime`` binds the host C API (libtle.so) with ctypes; ``tle.torch``
builds a communicator and symmetric buffers from a ``torch.distributed``
process group (GPUs, or CPU ranks under the interpreter); ``tle.cpu`` does
the same without PyTorch, with NumPy buffers, for ranks started by TLE's
launcher ``python -m tle.launch``.
"""

from __future__ import annotations

from ._paths import device_bitcode_path, host_library_path

try:
    # Written by the build (cmake/TLEPython.cmake) from project(tle VERSION).
    from ._version import __version__
except ImportError:  # a source checkout: the same line, read directly
    from ._paths import source_version as _source_version

    __version__ = _source_version()

#: The name under which the device bitcode is passed in ``extern_libs``.
EXTERN_LIB_NAME = "tle"


def extern_libs() -> dict[str, str]:
    """The ``extern_libs`` compile option that links TLE's device bitcode:
    ``kernel[grid](..., extern_libs=tle.extern_libs())``.

    Under Triton's interpreter (``TRITON_INTERPRET=1``) nothing is linked
    (the interpreter ignores the option and TLE calls libtle.so instead),
    so a missing bitcode is not an error there: the result is then empty."""
    try:
        return {EXTERN_LIB_NAME: device_bitcode_path()}
    except FileNotFoundError:
        from ._interp import interpreting
        if interpreting():
            return {}
        raise


__all__ = ["EXTERN_LIB_NAME", "device_bitcode_path", "extern_libs", "host_library_path"]
