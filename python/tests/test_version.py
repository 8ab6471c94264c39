# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The package's version is project()'s (the top-level CMakeLists.txt), in a
source checkout as in the wheel (where CMake writes tle/_version.py and
scikit-build-core reads the same line for the metadata;
scripts/test-wheel.sh checks that side), and tle.torch names the extra to
install when PyTorch is missing."""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

import pytest

import tle

REPO = Path(__file__).resolve().parents[2]


def project_version() -> str:
    return re.search(r"project\(tle VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text()).group(1)


def test_version_is_projects():
    assert tle.__version__ == project_version()


def test_version_h_agrees():
    build = os.environ.get("TLE_BUILD_DIR")
    header = Path(build or REPO / "build") / "generated" / "include" / "tle" / "version.h"
    if not header.exists():
        pytest.skip(f"{header} not generated (configure the build first)")
    assert f'#define TLE_VERSION_STRING "{tle.__version__}"' in header.read_text()


def test_pyproject_reads_the_version_from_project():
    pyproject = (Path(tle.__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    regex = re.search(r"^regex = '(.*)'$", pyproject, re.M).group(1)
    assert re.search(regex, (REPO / "CMakeLists.txt").read_text()).group("value") == tle.__version__


def test_torch_missing_names_the_extra(monkeypatch):
    # None in sys.modules makes `import torch` fail as if it were not
    # installed, whether or not it is.
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "tle.torch", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'tle-triton\[torch\]'"):
        importlib.import_module("tle.torch")


@pytest.mark.parametrize("version", ["2.4.0", "2.5.1", "3.0.0rc1"])
def test_a_numpy_the_interpreter_cannot_use_is_refused_at_import(monkeypatch, version):
    import numpy

    from tle import _interp
    monkeypatch.setattr(numpy, "__version__", version)
    with pytest.raises(ImportError, match=rf"NumPy {re.escape(version)} is installed.*"
                       r"pip install 'numpy>=1.26,<2.4'"):
        _interp.check_numpy()
    monkeypatch.delitem(sys.modules, "tle.cpu", raising=False)
    with pytest.raises(ImportError, match="Triton 3.6's interpreter"):
        importlib.import_module("tle.cpu")


def test_the_numpy_pin_is_the_packages():
    # One pin: pyproject's requirement is what check_numpy enforces.
    from tle import _interp
    pyproject = (REPO / "python" / "pyproject.toml").read_text()
    pin = "numpy>=1.26,<{}.{}".format(*_interp.NUMPY_TOO_NEW)
    dependencies = re.search(r"^dependencies = \[(.*)\]$", pyproject, re.M).group(1)
    assert f'"{pin}"' in dependencies
    assert re.search(rf'^cpu = \["{re.escape(pin)}"\]$', pyproject, re.M)
    import numpy
    _interp.check_numpy()  # the venv's NumPy passes
    assert tuple(int(p) for p in numpy.__version__.split(".")[:2]) < _interp.NUMPY_TOO_NEW
