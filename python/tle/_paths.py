"""Where the TLE binaries are: the device bitcode linked into Triton kernels
and the host library (libtle.so) that the ctypes binding loads.

Both are looked up in the same order: an explicit environment variable, then
a copy bundled in this package (bitcode only), then the build directory named
by ``TLE_BUILD_DIR``, then the build directories of the source checkout this
package lives in (an editable install or ``PYTHONPATH=python``).
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_DIR = _PACKAGE_DIR.parent.parent

DEVICE_BC_NAME = "libtle_device.bc"
HOST_LIB_NAME = "libtle.so"


def _candidates(env: str, bundled: Path | None, build_dirs: list[str], name: str) -> list[Path]:
    paths = []
    if os.environ.get(env):
        # An explicit choice is the only candidate: falling back silently
        # would hide a typo in the variable.
        return [Path(os.environ[env])]
    if bundled is not None:
        paths.append(bundled)
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
    """Path of ``libtle_device.bc``: ``$TLE_DEVICE_BC``, the bundled copy,
    ``$TLE_BUILD_DIR/lib``, or ``<repo>/build/lib``."""
    return _first_existing(
        "device bitcode", "TLE_DEVICE_BC",
        _candidates("TLE_DEVICE_BC", _PACKAGE_DIR / "lib" / DEVICE_BC_NAME, ["build"], DEVICE_BC_NAME))


def host_library_path() -> str:
    """Path of ``libtle.so``: ``$TLE_LIB``, ``$TLE_BUILD_DIR/lib``,
    ``<repo>/build-gpu/lib`` (the CUDA build), or ``<repo>/build/lib``."""
    return _first_existing(
        "host library", "TLE_LIB",
        _candidates("TLE_LIB", None, ["build-gpu", "build"], HOST_LIB_NAME))
