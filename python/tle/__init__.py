"""TLE for Triton: a device-side intra-node barrier usable in stock Triton.

``tle.language`` holds the functions called inside ``@triton.jit`` kernels;
they compile to calls into TLE's device bitcode, which every launch must link
with ``extern_libs=tle.extern_libs()``. ``tle.runtime`` binds the host C API
(libtle.so) with ctypes, and ``tle.torch`` builds a communicator and
symmetric buffers from a ``torch.distributed`` process group.
"""

from __future__ import annotations

from ._paths import device_bitcode_path, host_library_path

__version__ = "0.2.0"

#: The name under which the device bitcode is passed in ``extern_libs``.
EXTERN_LIB_NAME = "tle"


def extern_libs() -> dict[str, str]:
    """The ``extern_libs`` compile option that links TLE's device bitcode:
    ``kernel[grid](..., extern_libs=tle.extern_libs())``."""
    return {EXTERN_LIB_NAME: device_bitcode_path()}


__all__ = ["EXTERN_LIB_NAME", "device_bitcode_path", "extern_libs", "host_library_path"]
