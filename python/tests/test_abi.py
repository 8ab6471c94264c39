# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python front end agrees with the device ABI's one definition.

``runtime/device/include/tle/abi.def`` defines every encoding and entry
point. These tests parse that file with code of their own (they never take
expected values from ``tle.language``), and check the front end's tables and
the functions its builtins call against it. A few encodings are also written
out by hand from docs/abi.md, so that a change to abi.def itself that would
break FlagCX compatibility fails here too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tle import language

ABI_DEF = Path(__file__).resolve().parents[2] / "runtime/device/include/tle/abi.def"


def _parse_abi() -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """({macro: {spelling: value}}, {function: [param types]}) of abi.def."""
    text = ABI_DEF.read_text()
    # Drop comments and the #define/#ifndef lines, keep the X-macro uses.
    body = "\n".join(line for line in text.splitlines()
                     if not line.lstrip().startswith(("//", "#")))
    enums: dict[str, dict[str, int]] = {}
    for macro, name, value, spelling in re.findall(
            r"\b(TLE_[A-Z_]+)\((\w+),\s*(-?\d+),\s*(\w+)\)", body):
        enums.setdefault(macro, {})[spelling] = int(value)
    functions: dict[str, list[str]] = {}
    for name, result, params in re.findall(
            r"TLE_ABI_(?:TRITON_)?FUNCTION\((\w+),\s*(\w+),\s*\"[^\"]*\"((?:\s*,\s*\(\w+,\s*\w+\))*)\)", body):
        functions[name] = [result] + re.findall(r"\((\w+),\s*\w+\)", params)
    return enums, functions


ENUMS, FUNCTIONS = _parse_abi()


def test_parser_sees_the_definition():
    assert set(ENUMS) >= {"TLE_COOP", "TLE_ORDER", "TLE_TEAM", "TLE_SCOPE", "TLE_BARRIER_KIND"}
    assert len(FUNCTIONS) >= 18


def test_hand_written_encodings_of_docs_abi_md():
    # FlagCX's values: a change here breaks IR compatibility with FlagCX.
    assert ENUMS["TLE_COOP"] == {"thread": 0, "warp": 1, "block": 2, "tile_span": 3, "lanes": 4, "grid": 5}
    assert ENUMS["TLE_ORDER"] == {"relaxed": 0, "acquire": 1, "release": 2, "acq_rel": 3, "seq_cst": 4}
    assert ENUMS["TLE_TEAM"] == {"intra": 0, "inter": 1, "world": 2}
    assert ENUMS["TLE_SCOPE"] == {"system": 0, "device": 1, "block": 2, "thread": 3}
    assert ENUMS["TLE_BARRIER_KIND"] == {"arrive": 0, "wait": 1, "sync": 2}


@pytest.mark.parametrize("table,macro", [
    ("BARRIER_KINDS", "TLE_BARRIER_KIND"),
    ("GROUP_KINDS", "TLE_COOP"),
    ("ORDERS", "TLE_ORDER"),
    ("SIGNAL_GROUP_KINDS", "TLE_COOP"),
    ("OBSERVER_ORDERS", "TLE_ORDER"),
])
def test_front_end_tables_are_abi_values(table, macro):
    for spelling, value in getattr(language, table).items():
        assert ENUMS[macro].get(spelling) == value, f"{table}[{spelling!r}] disagrees with abi.def"


def test_triton_entry_points_have_abi_signatures():
    # What the builtins declare to Triton's extern_elementwise: one result,
    # int32/int64 arguments, matching abi.def's types.
    assert FUNCTIONS["tleTritonBarrier"] == ["I32", "I64", "I32", "I32", "I32", "I32"]
    assert FUNCTIONS["tleTritonIntraRank"] == ["I32", "I64"]
    assert FUNCTIONS["tleTritonIntraSize"] == ["I32", "I64"]
    assert FUNCTIONS["tleTritonLocalPointer"] == ["I64", "I64", "I64"]
    assert FUNCTIONS["tleTritonIntraPointer"] == ["I64", "I64", "I64", "I32"]
    assert FUNCTIONS["tleTritonSignal"] == ["I32", "I64", "I32", "I32", "I64", "I32"]
    assert FUNCTIONS["tleTritonSignalWait"] == ["I32", "I64", "I32", "I64", "I32", "I32"]
    assert FUNCTIONS["tleTritonReadSignal"] == ["I64", "I64", "I32", "I32"]
    assert FUNCTIONS["tleTritonResetSignal"] == ["I32", "I64", "I32"]
    assert FUNCTIONS["tleTritonCommFailed"] == ["I32", "I64"]
    source = Path(language.__file__).read_text()
    for name in ("tleTritonBarrier", "tleTritonIntraRank", "tleTritonIntraSize",
                 "tleTritonLocalPointer", "tleTritonIntraPointer", "tleTritonSignal", "tleTritonSignalWait",
                 "tleTritonReadSignal", "tleTritonResetSignal", "tleTritonCommFailed", "tleTritonTeamBarrier",
                 "tleTritonTeamSignal", "tleTritonTeamRank", "tleTritonTeamSize"):
        assert f'"{name}"' in source, f"tle.language no longer calls {name}"
    # FlagTree's spellings, which tle.flagtree calls, have their twins'
    # signatures.
    twins = {"tle_distributed_barrier": "tleTritonBarrier", "tle_remote_pointer": "tleTritonIntraPointer",
             "tle_get_device_id": "tleTritonIntraRank", "tle_get_world_rank": "tleTritonIntraRank",
             "tle_get_num_pes": "tleTritonIntraSize", "tle_signal": "tleTritonSignal",
             "tle_signal_wait": "tleTritonSignalWait"}
    flagtree = (Path(language.__file__).parent / "flagtree" / "language.py").read_text()
    for name, twin in twins.items():
        assert FUNCTIONS[name] == FUNCTIONS[twin], name
        assert f'"{name}"' in flagtree, f"tle.flagtree no longer calls {name}"


def test_signal_functions_are_flagcx_unified_signatures():
    # flagos-ai/FlagCX bindings/ir (docs/abi.md cites the commit): a change
    # here breaks IR compatibility with FlagCX.
    assert FUNCTIONS["flagcxDevSignalInc"] == ["Void", "Ptr", "I32", "I32", "U32", "U32", "I32", "I32"]
    assert FUNCTIONS["flagcxDevSignalAdd"] == ["Void", "Ptr", "I32", "I32", "U32", "U64", "U32", "I32", "I32"]
    assert FUNCTIONS["flagcxDevWaitSignal"] == ["Void", "Ptr", "U32", "U64", "I32", "U32", "I32", "I32"]
    assert FUNCTIONS["flagcxDevReadSignal"] == ["U64", "Ptr", "U32", "I32", "U32", "I32"]
    assert FUNCTIONS["flagcxDevResetSignal"] == ["Void", "Ptr", "U32", "U32"]


def test_docs_tabulate_every_entry_point():
    docs = (ABI_DEF.parents[4] / "docs/abi.md").read_text()
    missing = [name for name in FUNCTIONS if f"`{name}`" not in docs]
    assert not missing, f"docs/abi.md does not list {missing}"


def test_onesided_triton_entry_points_have_the_builtins_signatures():
    # What tle.language's one-sided builtins pass (python/tle/language.py:
    # _put, _get, put_value, flush, _counter_wait, read_counter,
    # reset_counter, shadow_increase, _shadow_wait), written out here.
    expected = {
        "tleTritonPut": ["I32", "I64", "I64", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I64", "I32",
                         "I32", "I32", "I32"],
        "tleTritonGet": ["I32", "I64", "I64", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I32"],
        "tleTritonPutValue": ["I32", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I64", "I32", "I32",
                              "I32"],
        "tleTritonFlush": ["I32", "I64", "I32", "I32", "I32"],
        "tleTritonWaitCounter": ["I32", "I64", "I32", "I64", "I32", "I32", "I32"],
        "tleTritonReadCounter": ["I64", "I64", "I32", "I32", "I32"],
        "tleTritonResetCounter": ["I32", "I64", "I32", "I32"],
        "tleTritonIncreaseSignalShadow": ["I32", "I64", "I32", "I64", "I32"],
        "tleTritonWaitSignalShadow": ["I32", "I64", "I32", "I32", "I32", "I32"],
    }
    source = Path(language.__file__).read_text()
    for name, signature in expected.items():
        assert FUNCTIONS.get(name) == signature, name
        assert f'"{name}"' in source, f"tle.language no longer calls {name}"
