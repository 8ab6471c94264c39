# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Linking TLE's device bitcode into kernels that use ``tle.flagtree``
without ``extern_libs``.

FlagTree links its device library itself, so FlagTree's kernels pass no
``extern_libs``. Stock Triton 3.6 links only what the compile option names,
in ``make_llir`` (the TTGIR to LLVM IR stage, before LLVM optimizes the
module). Its knob ``triton.knobs.runtime.add_stages_inspection_hook`` lets a
program edit the stages of every compilation; importing ``tle.flagtree``
installs one (chained after any hook already there) that wraps the ``llir``
stage: when the TTGIR calls into library ``tle`` and the options do not
already link it, the stage runs with ``("tle", <bitcode>)`` added to the
options' ``extern_libs``, so Triton links and optimizes exactly as if the
launch had passed ``extern_libs=tle.extern_libs()``. Other kernels are not
touched. The options object is restored when the stage returns.

What this cannot do: the compile options are hashed into Triton's cache key
before any stage runs, so the key does not cover the bitcode's contents.
``create_dist_tensor``'s context (a constexpr argument) carries a hash of
the bitcode in its ``repr``, which the key does cover; a kernel that takes
its communicator as a runtime argument instead must be recompiled by hand
(clear the Triton cache) after TLE's bitcode changes, or pass
``extern_libs=tle.extern_libs()``.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from typing import Any

from triton import knobs

from .. import EXTERN_LIB_NAME, device_bitcode_path

_lock = threading.Lock()


def bitcode_path(_semantic: Any) -> str:
    """The bitcode a call into TLE in this compilation refers to: the
    ``extern_libs`` entry if the launch passed one, else TLE's own, which
    the stage hook links. CUDA only."""
    options = getattr(_semantic.builder, "options", None)
    if options is None:
        return device_bitcode_path()
    backend = getattr(options, "backend_name", "cuda")
    if backend != "cuda":
        raise ValueError(f"TLE supports Triton's CUDA backend only; this kernel is compiled for {backend!r}")
    libs = dict(getattr(options, "extern_libs", None) or ())
    if EXTERN_LIB_NAME in libs:
        return libs[EXTERN_LIB_NAME]
    if not installed():
        # The stages of this compilation were made before this call, so
        # installing the hook now would come too late for it.
        raise ValueError("this kernel calls TLE's device library, which tle.flagtree links through "
                         "triton.knobs.runtime.add_stages_inspection_hook, but that hook was replaced after "
                         "tle.flagtree was imported: set your hook first, or launch with "
                         "extern_libs=tle.extern_libs()")
    return device_bitcode_path()


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def bitcode_digest() -> str:
    """A short hash of the bitcode that would be linked, for cache keys;
    "none" when there is none (Triton's interpreter runs without it)."""
    try:
        path = device_bitcode_path()
    except FileNotFoundError:
        return "none"
    import os
    st = os.stat(path)
    return _file_digest(path, st.st_mtime_ns, st.st_size)


def _calls_tle(module: Any) -> bool:
    """Whether a TTGIR module calls a function of library ``tle``."""
    return f'libname = "{EXTERN_LIB_NAME}"' in str(module)


def _link_tle(backend: Any, stages: dict, options: Any, language: Any, capability: Any, previous=None) -> None:
    if previous is not None:
        previous(backend, stages, options, language, capability)
    if "llir" not in stages or getattr(options, "backend_name", "cuda") != "cuda":
        return
    if EXTERN_LIB_NAME in dict(getattr(options, "extern_libs", None) or ()):
        return
    make_llir = stages["llir"]

    def llir(src, metadata):
        if not _calls_tle(src):
            return make_llir(src, metadata)
        saved = options.extern_libs
        linked = tuple(saved or ()) + ((EXTERN_LIB_NAME, device_bitcode_path()),)
        # The options are a frozen dataclass that make_llir reads; the
        # stage is given them with TLE's bitcode added, then they are put
        # back as they were.
        object.__setattr__(options, "extern_libs", linked)
        try:
            return make_llir(src, metadata)
        finally:
            object.__setattr__(options, "extern_libs", saved)

    stages["llir"] = llir


def install() -> None:
    """Installs the stage hook, chained after the one in place (idempotent)."""
    with _lock:
        if installed():
            return
        previous = knobs.runtime.add_stages_inspection_hook
        hook = functools.partial(_link_tle, previous=previous)
        hook.tle_links_bitcode = True
        knobs.runtime.add_stages_inspection_hook = hook


def installed() -> bool:
    """Whether the current hook is (or chains) TLE's."""
    return getattr(knobs.runtime.add_stages_inspection_hook, "tle_links_bitcode", False)
