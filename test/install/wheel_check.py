# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Run in a fresh virtual environment where only the tle-triton wheel (and
what it depends on, Triton 3.6) was installed, from a folder outside the
source tree and with no TLE_* variables set: the package must find its own
bitcode and libtle.so, say its version (project()'s), compile a Triton
kernel with distributed_barrier for sm_90 without a GPU, and explain a
missing PyTorch. Prints one line per check; raises on the first failure."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import tempfile
from pathlib import Path

expected_version = sys.argv[1]
for name in ("TLE_DEVICE_BC", "TLE_LIB", "TLE_BUILD_DIR"):
    assert name not in os.environ, f"run without {name}: the package must find its own files"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tle-wheel-triton-cache-")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import tle  # noqa: E402
import tle.language as tlx  # noqa: E402
from tle import runtime  # noqa: E402

package = Path(tle.__file__).resolve().parent
assert "site-packages" in package.parts, package
assert tle.__version__ == importlib.metadata.version("tle-triton") == expected_version, \
    (tle.__version__, importlib.metadata.version("tle-triton"), expected_version)
print(f"tle-triton {tle.__version__} in {package}")

bitcode = Path(tle.device_bitcode_path())
library = Path(tle.host_library_path())
assert bitcode == package / "lib" / "libtle_device.bc", bitcode
assert library == package / "lib" / "libtle.so", library
assert tle.extern_libs() == {"tle": str(bitcode)}
# The ABI's encodings and rules, generated at build time (tle/_abi.py),
# not generated again from a source checkout the wheel does not have.
abi = importlib.import_module("tle._abi")
assert Path(abi.__file__).resolve() == package / "_abi.py", abi.__file__
assert "acquire" not in tlx._abi.ORDER_RULES["arrive"], tlx._abi.ORDER_RULES
print(f"packaged files: {bitcode.name}, {library.name}, {Path(abi.__file__).name}")

# NumPy comes with the package, in a version Triton 3.6's interpreter can
# use (python/pyproject.toml's pin).
import numpy  # noqa: E402

assert tuple(int(p) for p in numpy.__version__.split(".")[:2]) < (2, 4), numpy.__version__
requirement = [r for r in importlib.metadata.requires("tle-triton") if r.startswith("numpy") and "extra" not in r]
assert requirement == ["numpy<2.4,>=1.26"] or requirement == ["numpy>=1.26,<2.4"], requirement
print(f"NumPy {numpy.__version__} installed with it ({requirement[0]})")

lib = runtime.library()
lib.tleGetErrorString.restype = __import__("ctypes").c_char_p
assert lib.tleGetErrorString(4) == b"timed out"
print("libtle.so loads")


@triton.jit
def barrier_kernel(comm, out, n_iters):
    for _ in range(n_iters):
        tlx.distributed_barrier(comm, space="device", barrier_kind="sync", group_kind="block",
                                order="acq_rel", index=tl.program_id(0))
    tl.store(out + tl.program_id(0), tlx.intra_rank(comm))


src = triton.compiler.ASTSource(fn=barrier_kernel, signature={"comm": "i64", "out": "*i32", "n_iters": "i32"})
kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"extern_libs": tle.extern_libs()})
ptx = kernel.asm["ptx"]
# Linked and inlined: no external TLE function is left, and the barrier's
# release/acquire operations are in the kernel.
assert not re.search(r"\.extern \.func .*(tle|flagcx)", ptx), "the device library was not linked"
assert re.search(r"\.release\.sys", ptx) and re.search(r"ld\.acquire\.sys", ptx), "no barrier in the PTX"
print(f"sm_90 kernel with distributed_barrier compiled and linked ({len(ptx)} bytes of PTX)")

# The collectives ship in the wheel, and one of them links from it.
import tle.ops  # noqa: E402
from tle.ops import all_reduce  # noqa: E402

assert Path(tle.ops.__file__).resolve().parent == package / "ops", tle.ops.__file__
src = triton.compiler.ASTSource(fn=all_reduce.oneshot_kernel, signature={
    "comm": "i64", "x": "*bf16", "out": "*bf16", "stage": "i64", "state": "*i64", "n": "i32", "half_bytes": "i64",
    "slot": "i32", "OP": "constexpr", "BLOCK": "constexpr", "MAXG": "constexpr", "INTERP": "constexpr"},
    constexprs={"OP": 0, "BLOCK": 1024, "MAXG": 256, "INTERP": False})
ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"extern_libs": tle.extern_libs()}).asm["ptx"]
assert not re.search(r"\.extern \.func .*(tle|flagcx)", ptx), "tle.ops: the device library was not linked"
print(f"tle.ops imports from the wheel; its one-shot all-reduce compiles for sm_90 ({len(ptx)} bytes of PTX)")

try:
    import tle.torch  # noqa: F401
except ModuleNotFoundError as e:
    assert "pip install 'tle-triton[torch]'" in str(e), e
    print(f"without PyTorch: {e}")
else:
    print("PyTorch is installed: tle.torch imports")
print("wheel OK")
