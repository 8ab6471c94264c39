# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Shared fixtures of the CI tests: compile Triton kernels for sm_90 without a
GPU, linking TLE's device bitcode, and expose every stage of the result.

Kernels are compiled with ``triton.compile(ASTSource(...), target=GPUTarget(
"cuda", 90, 32))``: Triton 3.6 then needs no driver, and its bundled ptxas
assembles the PTX. A private Triton cache keeps results from earlier runs
(of other versions of this package) out of the tests.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tle-triton-cache-")

import triton  # noqa: E402  (after TRITON_CACHE_DIR is set)
from triton.backends.compiler import GPUTarget  # noqa: E402

import tle  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)


@dataclass
class Compiled:
    """The stages of one compiled kernel."""
    ttir: str
    llir: str
    ptx: str
    ttgir: str = ""
    shared: int = 0  #: bytes of shared memory a block of it needs


@pytest.fixture(scope="session")
def host_library():
    """libtle, loaded; the tests that need it skip, saying why, when it is
    not built (modules that need it throughout use it with
    ``pytestmark = pytest.mark.usefixtures("host_library")``)."""
    from tle import runtime
    try:
        return runtime.library()
    except FileNotFoundError as e:
        pytest.skip(f"libtle.so not built: {e}")


@pytest.fixture(scope="session")
def bitcode() -> str:
    """The device bitcode; the tests that need it skip, saying why, when it
    is absent (scripts/test.sh builds it first, so in CI they run)."""
    try:
        return tle.device_bitcode_path()
    except FileNotFoundError as e:
        pytest.skip(f"TLE device bitcode not built: {e}")


@pytest.fixture
def compile_kernel(bitcode):
    """compile_kernel(fn, signature, constexprs=None, link=True, **options)."""

    def compile_(fn, signature: dict[str, str], constexprs: dict | None = None, link: bool = True,
                 aligned: tuple[str, ...] = (), **options) -> Compiled:
        """`aligned`: arguments a launch specializes as multiples of 16
        (16-byte aligned pointers, integers divisible by 16), as Triton's
        launcher does for real tensors and sizes."""
        if link:
            options["extern_libs"] = tle.extern_libs()
        names = list(signature)
        attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in aligned}
        src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs or {}, attrs=attrs)
        kernel = triton.compile(src, target=TARGET, options=options)
        return Compiled(kernel.asm["ttir"], kernel.asm["llir"], kernel.asm["ptx"], kernel.asm["ttgir"],
                        kernel.metadata.shared)

    return compile_
