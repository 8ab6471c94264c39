# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the TLE binaries are: the device bitcode linked into Triton kernels
and the host library (libtle.so) that the ctypes binding loads.

Both are looked up in the same order: an explicit environment variable, then
the copy installed with this package (``tle/lib/`` in the wheel, from CMake's
install component Python), then the build directory named by
``TLE_BUILD_DIR``, then the build directories of the source checkout this
package lives in (an editable install or ``PYTHONPATH=python``).
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_DIR = _PACKAGE_DIR.parent.parent

DEVICE_BC_NAME = "libtle_device.bc"
HOST_LIB_NAME = "libtle.so"


def _candidates(env: str, build_dirs: list[str], name: str) -> list[Path]:
    if os.environ.get(env):
        # An explicit choice is the only candidate: falling back silently
        # would hide a typo in the variable.
        return [Path(os.environ[env])]
    paths = [_PACKAGE_DIR / "lib" / name]
    if os.environ.get("TLE_BUILD_DIR"):
        paths.append(Path(os.environ["TLE_BUILD_DIR"]) / "lib" / name)
    paths.extend(_REPO_DIR / d / "lib" / name for d in build_dirs)
    return paths


def _first_existing(what: str, env: str, candidates: list[Path]) -> str:
    for path in candidates:
        if path.is_file():
            return str(path)
    tried = "\n  ".join(str(p) for p in candidates)
    raise FileNotFoundError(
        f"TLE {what} not found; set {env} or build it (see docs/triton.md). Tried:\n  {tried}")


def device_bitcode_path() -> str:
    """Path of ``libtle_device.bc``: ``$TLE_DEVICE_BC``, the packaged copy,
    ``$TLE_BUILD_DIR/lib``, or ``<repo>/build/lib``."""
    return _first_existing(
        "device bitcode", "TLE_DEVICE_BC", _candidates("TLE_DEVICE_BC", ["build"], DEVICE_BC_NAME))


def host_library_path() -> str:
    """Path of ``libtle.so``: ``$TLE_LIB``, the packaged copy,
    ``$TLE_BUILD_DIR/lib``, ``<repo>/build-gpu/lib`` (the CUDA build), or
    ``<repo>/build/lib``."""
    return _first_existing(
        "host library", "TLE_LIB", _candidates("TLE_LIB", ["build-gpu", "build"], HOST_LIB_NAME))


def source_version() -> str:
    """The version in ``project(tle VERSION ...)`` of the source checkout this
    package lives in (an installed package has ``tle/_version.py`` instead,
    written from the same line by CMake); "unknown" outside a checkout."""
    import re

    try:
        text = (_REPO_DIR / "CMakeLists.txt").read_text()
    except OSError:
        return "unknown"
    match = re.search(r"project\(tle VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text)
    return match.group(1) if match else "unknown"
