# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.runtime's copy of the host C API agrees with
``runtime/include/tle/tle.h``: the result codes and the other enums, name by
name and value by value; ``tleConfig_t`` and ``tleErrorInfo`` field by field
(name, C type, array length); ``TLE_MAX_RANKS`` and the unique id's size; and
the version, project()'s. tle.h is parsed here with code of its own, and
also compiled (with the C compiler on PATH, if any), so that the offsets
and sizes ctypes computes are the C compiler's too.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tle import runtime

REPO = Path(__file__).resolve().parents[2]
TLE_H = REPO / "runtime" / "include" / "tle" / "tle.h"
BUILD = Path(os.environ.get("TLE_BUILD_DIR") or REPO / "build")


def _header() -> str:
    """tle.h without its comments."""
    text = re.sub(r"/\*.*?\*/", "", TLE_H.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


HEADER = _header()
DEFINES = {m[1]: m[2].strip() for m in re.finditer(r"^#define (\w+) +(.+)$", HEADER, re.M)}


def _enum(name: str) -> dict[str, int]:
    body = re.search(r"typedef enum \{([^}]*)\}\s*" + re.escape(name) + ";", HEADER)
    assert body, f"tle.h has no typedef enum {{...}} {name}"
    return {m[1]: int(m[2]) for m in re.finditer(r"(\w+)\s*=\s*(-?\d+)", body[1])}


def _struct(name: str) -> list[tuple[str, str, int | None]]:
    """[(field, C type, array length or None)] of a typedef struct."""
    body = re.search(r"typedef struct \{([^}]*)\}\s*" + re.escape(name) + ";", HEADER)
    assert body, f"tle.h has no typedef struct {{...}} {name}"
    fields = []
    for decl in body[1].split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.fullmatch(r"([\w ]+?) (\w+)(?:\[([^\]]+)\])?", decl)
        assert m, f"{name}: cannot read the field {decl!r}"
        length = None
        if m[3]:
            expr = re.sub(r"\b[A-Z_]+\b", lambda d: DEFINES[d[0]], m[3])
            length = int(eval(expr.replace("/", "//"), {}))  # an integer constant expression of literals
        fields.append((m[2], m[1], length))
    return fields


def _upper_snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


# C type -> ctypes type, for the types tle.h's structs use (enums are ints).
CTYPES = {"size_t": ctypes.c_size_t, "unsigned": ctypes.c_uint, "int": ctypes.c_int, "uint32_t": ctypes.c_uint32,
          "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64, "char": ctypes.c_char}


def _ctype(c_type: str):
    if c_type in CTYPES:
        return CTYPES[c_type]
    if c_type in ("tleBackend_t", "tleAllocType_t", "tleOnError_t", "tleResult_t"):
        return ctypes.c_int
    raise AssertionError(f"no ctypes mapping for {c_type!r}: add it here")


@pytest.mark.parametrize("c_enum, py_enum, prefix", [
    ("tleResult_t", runtime.Result, "tle"),
    ("tleBackend_t", runtime.Backend, "tleBackend"),
    ("tleAllocType_t", runtime.Alloc, "tleAlloc"),
    ("tleOnError_t", runtime.OnError, "TLE_ON_ERROR_"),
])
def test_enums_are_tle_h(c_enum, py_enum, prefix):
    header = {}
    for name, value in _enum(c_enum).items():
        short = name[len(prefix):]
        header[short if short.isupper() else _upper_snake(short)] = value
    assert header, c_enum
    assert {m.name: m.value for m in py_enum} == header


@pytest.mark.parametrize("c_struct, py_struct", [
    ("tleConfig_t", runtime._Config),
    ("tleErrorInfo", runtime._ErrorInfo),
    ("tleUniqueId", runtime._UniqueId),
])
def test_structs_are_tle_h(c_struct, py_struct):
    header = _struct(c_struct)
    ours = list(py_struct._fields_)
    assert [f for f, _, _ in header] == [f for f, _ in ours], f"{c_struct}: the fields differ"
    for (field, c_type, length), (_, py_type) in zip(header, ours):
        want = _ctype(c_type)
        if length is not None:
            assert issubclass(py_type, ctypes.Array), f"{c_struct}.{field} is an array in tle.h"
            assert (py_type._type_, py_type._length_) == (want, length), f"{c_struct}.{field}"
        else:
            assert py_type == want, f"{c_struct}.{field}: {py_type} for C {c_type}"


def test_constants_are_tle_h():
    assert int(DEFINES["TLE_MAX_RANKS"]) == runtime.MAX_RANKS
    assert int(DEFINES["TLE_MAX_CONTEXTS"]) == runtime.MAX_CONTEXTS
    assert _struct("tleUniqueId") == [("internal", "char", runtime.UNIQUE_ID_BYTES)]


def test_version_is_projects():
    major, minor = re.search(r"project\(tle VERSION (\d+)\.(\d+)\.\d+", (REPO / "CMakeLists.txt").read_text()).groups()
    assert (runtime.VERSION_MAJOR, runtime.VERSION_MINOR) == (int(major), int(minor))
    version_h = BUILD / "generated" / "include" / "tle" / "version.h"
    if version_h.exists():
        text = version_h.read_text()
        assert f"#define TLE_VERSION_MAJOR {runtime.VERSION_MAJOR}\n" in text
        assert f"#define TLE_VERSION_MINOR {runtime.VERSION_MINOR}\n" in text


def test_layouts_are_the_c_compilers(tmp_path):
    cc = shutil.which("cc")
    version_h = BUILD / "generated" / "include"
    if cc is None or not (version_h / "tle" / "version.h").exists():
        pytest.skip("needs a C compiler and a configured build (tle/version.h)")
    structs = {"tleConfig_t": runtime._Config, "tleErrorInfo": runtime._ErrorInfo, "tleUniqueId": runtime._UniqueId}
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "tle/tle.h"', "int main(void) {"]
    for c_struct, py_struct in structs.items():
        lines.append(f'  printf("{c_struct} %zu\\n", sizeof({c_struct}));')
        for field, _ in py_struct._fields_:
            lines.append(f'  printf("{c_struct}.{field} %zu\\n", offsetof({c_struct}, {field}));')
    lines += ["  return 0;", "}"]
    (tmp_path / "probe.c").write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-I", str(REPO / "runtime" / "include"), "-I", str(version_h), "probe.c", "-o", "probe"],
                   cwd=tmp_path, check=True)
    c = dict(line.rsplit(" ", 1) for line in subprocess.run(
        [str(tmp_path / "probe")], check=True, capture_output=True, text=True).stdout.splitlines())
    for c_struct, py_struct in structs.items():
        assert int(c[c_struct]) == ctypes.sizeof(py_struct), c_struct
        for field, _ in py_struct._fields_:
            assert int(c[f"{c_struct}.{field}"]) == getattr(py_struct, field).offset, f"{c_struct}.{field}"
