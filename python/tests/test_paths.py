# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where tle finds its binaries: an explicit environment variable wins and is
never silently replaced; a missing file is reported with every place tried."""

from __future__ import annotations

from pathlib import Path

import pytest

import tle


def test_explicit_bitcode_path_must_exist(monkeypatch, tmp_path):
    missing = tmp_path / "nowhere.bc"
    monkeypatch.setenv("TLE_DEVICE_BC", str(missing))
    with pytest.raises(FileNotFoundError, match=r"set TLE_DEVICE_BC.*\n  .*nowhere\.bc"):
        tle.extern_libs()


def test_explicit_paths_win(monkeypatch, tmp_path):
    bc, lib = tmp_path / "x.bc", tmp_path / "libx.so"
    bc.write_bytes(b"BC")
    lib.write_bytes(b"")
    monkeypatch.setenv("TLE_DEVICE_BC", str(bc))
    monkeypatch.setenv("TLE_LIB", str(lib))
    assert tle.extern_libs() == {"tle": str(bc)}
    assert tle.host_library_path() == str(lib)


def test_build_dir_is_searched(monkeypatch, tmp_path):
    packaged = Path(tle.__file__).parent / "lib"
    if packaged.exists():
        pytest.skip(f"the packaged files ({packaged}) take precedence over TLE_BUILD_DIR")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libtle_device.bc").write_bytes(b"BC")
    (tmp_path / "lib" / "libtle.so").write_bytes(b"")
    monkeypatch.delenv("TLE_DEVICE_BC", raising=False)
    monkeypatch.delenv("TLE_LIB", raising=False)
    monkeypatch.setenv("TLE_BUILD_DIR", str(tmp_path))
    assert tle.device_bitcode_path() == str(tmp_path / "lib" / "libtle_device.bc")
    assert tle.host_library_path() == str(tmp_path / "lib" / "libtle.so")
