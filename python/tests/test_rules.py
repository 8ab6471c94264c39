# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The two front ends apply the same legality rules: for every barrier kind
x memory order x group x team (and every session, signal-wait, counter-wait,
put and get order), tle-opt's verifier and tle.language's checks give the
same verdict. Both read runtime/device/include/tle/rules.def (tle/rules.h in
C++, the generated tle/_abi.py in Python); this test fails where either
consumer stops following it, or where the build's generated module is not
what the checkout's files generate.

tle-opt is taken from $TLE_BUILD_DIR/bin (or <repo>/build/bin); without it
the comparison is skipped, saying so. The combinations are spelled out here
by hand, never taken from either front end.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from pathlib import Path

import pytest

from tle import _abigen
from tle import language as tlx

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TLE_BUILD_DIR") or REPO / "build")
TLE_OPT = BUILD / "bin" / "tle-opt"

KINDS = ("arrive", "wait", "sync")
ORDERS = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
GROUPS = ("thread", "warp", "block", "grid")
TEAMS = ("intra", "inter", "world")

# One case per function, each op named by its location so that a verdict
# finds its case whatever the chunk's line numbers.
_HEADER = "func.func @case{n}(%comm: !llvm.ptr, %buf: !llvm.ptr, %index: i32, %v: i64, %peer: i32) {{\n"
_FOOTER = "  return\n}\n// -----\n"


def _barrier_op(kind, order, group, team):
    return f"tle.device_barrier {kind} %comm, %index team {team} group {group} order {order} : !llvm.ptr"


def _session_op(kind, order, group):
    return f"tle.session_barrier {kind} %comm, %index, %index group {group} order {order} : !llvm.ptr"


def _cases():
    """[(op text, what the Python front end says: None or the error)]."""
    cases = []

    def python_verdict(check, *args):
        try:
            check(*args)
        except ValueError as e:
            return str(e)
        return None

    for kind, order, group, team in itertools.product(KINDS, ORDERS, GROUPS, TEAMS):
        cases.append((_barrier_op(kind, order, group, team),
                      python_verdict(tlx.check_barrier_rules, kind, order, group, team)))
    for kind, order, group in itertools.product(KINDS, ORDERS, GROUPS):
        cases.append((_session_op(kind, order, group),
                      python_verdict(tlx.check_barrier_rules, kind, order, group, "intra", True)))

    def in_table(table, order):
        return None if order in table else f"order {order!r} refused"

    for order in ORDERS:
        observe = in_table(tlx.OBSERVER_ORDERS, order)
        cases.append((f"tle.signal_wait %comm, %index, %v order {order} : !llvm.ptr", observe))
        cases.append((f"%r = tle.read_signal %comm, %index order {order} : !llvm.ptr", observe))
        cases.append((f"tle.counter_wait %comm, %index, %v order {order} : !llvm.ptr", observe))
        cases.append((f"tle.put %comm, %buf[%v], %buf[%v], %v, %peer order {order} : !llvm.ptr",
                      in_table(tlx.PUBLISHER_ORDERS, order)))
        cases.append((f"tle.get %comm, %buf[%v], %buf[%v], %v, %peer order {order} : !llvm.ptr",
                      in_table(tlx.GET_ORDERS, order)))
    return cases


def _tle_opt_verdicts(cases, tmp_path):
    """{case number: tle-opt's error or None}."""
    text = "".join(_HEADER.format(n=n) + f'  {op} loc("case{n}")\n' + _FOOTER for n, (op, _) in enumerate(cases))
    source = tmp_path / "rules.mlir"
    source.write_text(text)
    run = subprocess.run([str(TLE_OPT), "--split-input-file", str(source), "-o", os.devnull],
                         capture_output=True, text=True, timeout=120)
    errors = dict(re.findall(r'error: loc\("case(\d+)"\): (.*)', run.stderr))
    unplaced = [line for line in run.stderr.splitlines() if "error:" in line and 'loc("case' not in line]
    assert not unplaced, f"tle-opt failed outside a case (a case does not parse?):\n{run.stderr[:3000]}"
    assert (run.returncode != 0) == bool(errors), run.stderr[:3000]
    return {n: errors.get(str(n)) for n in range(len(cases))}


def test_both_front_ends_give_every_combination_the_same_verdict(tmp_path):
    if not TLE_OPT.exists():
        pytest.skip(f"{TLE_OPT} not built (cmake --build build --target tle-opt): the dialect's verdicts "
                    f"cannot be compared")
    cases = _cases()
    verdicts = _tle_opt_verdicts(cases, tmp_path)
    differ = [f"{op}\n    tle-opt: {verdicts[n] or 'accepted'}\n    tle.language: {python or 'accepted'}"
              for n, (op, python) in enumerate(cases) if (verdicts[n] is None) != (python is None)]
    assert not differ, "the front ends disagree:\n" + "\n".join(differ)
    # Not a comparison of two that accept everything: the rules refuse some
    # of each family (hand-counted from docs/abi.md's rules).
    refused = sum(v is not None for v in verdicts.values())
    assert refused == (2 * 4 * 3 + 13 * 2) + (2 * 4 + 13) + 3 + 2 + 2, refused


def test_the_rules_named_in_docs_abi_md():
    """A few verdicts by hand: the two of issue 26 and the grid team."""
    for kind, order in (("arrive", "acquire"), ("wait", "release")):
        with pytest.raises(ValueError, match=f"barrier_kind '{kind}' cannot"):
            tlx.check_barrier_rules(kind, order, "block")
    with pytest.raises(ValueError, match="only available with team 'intra'"):
        tlx.check_barrier_rules("sync", "acq_rel", "grid", "inter")
    for kind, order in (("arrive", "release"), ("arrive", "acq_rel"), ("wait", "acquire"), ("sync", "seq_cst")):
        tlx.check_barrier_rules(kind, order, "block", "world")


def test_the_builds_module_is_what_the_checkout_generates():
    generated = BUILD / "python" / "_abi.py"
    if not generated.exists():
        pytest.skip(f"{generated} not generated (cmake --build build --target tle_abi_py)")
    include = REPO / "runtime" / "device" / "include" / "tle"
    expected = _abigen.generate((include / "abi.def").read_text(), (include / "rules.def").read_text())
    assert generated.read_text() == expected, "the build's tle/_abi.py is stale: rebuild target tle_abi_py"


def test_the_generator_refuses_what_it_cannot_read():
    include = REPO / "runtime" / "device" / "include" / "tle"
    abi, rules = (include / "abi.def").read_text(), (include / "rules.def").read_text()
    with pytest.raises(ValueError, match="TLE_ORDER_RULE"):
        _abigen.generate(abi, rules.replace("TLE_ORDER_RULE(Arrive, arrive,", "TLE_ORDER_RULE((Arrive), arrive,"))
    with pytest.raises(ValueError, match="abi.def's orders"):
        _abigen.generate(abi.replace("TLE_ORDER(SeqCst, 4, seq_cst)", ""), rules)
