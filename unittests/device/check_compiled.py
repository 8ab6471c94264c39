#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compiles one source of the device-library tests and FileChecks the result.

Used by the `device-ptx-kernels` and `device-host-orders` ctest tests
(unittests/device/CMakeLists.txt) and, through them, by the mutation job:
when the environment names a mutant (TLE_MUTATION=n, scripts/mutate.py), the
source is compiled with -DTLE_MUTATION=n, so that the check sees the
library with that mutant switched on.

  check_compiled.py [--ptx-summary] [--rules-prefix P]... OUTPUT FILECHECK
                    CHECKFILE [FILECHECK_OPTIONS...] -- COMPILER ARGS...

--ptx-summary: FileCheck reads, instead of the PTX itself, one line per
kernel (`.entry`): its name, a colon, and the sorted set of the ordered
instructions, fences, barriers and non-constant memory accesses in its body,
each spelled as its PTX opcode; then one line per function (`.func`) with
its ordered accesses, fences and traps. A check of such a line with
--match-full-lines states exactly what the kernel contains and, by
omission, what it does not.
"""

import argparse
import os
import re
import subprocess
import sys

# A .func that returns a value names its return parameter before its name.
ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?(\w+)\s*(?:\(\)?)?$")
# Opcodes that touch memory or order it. Loads of the communicator go
# through the read-only path (ld.global.nc) and parameters and the stack are
# private: neither orders anything, and neither is listed.
LISTED = re.compile(r"^(?:(?:ld|st|red|atom|multimem|cp)\.\S+|fence\.\S+|membar\S*|bar\.\S+|barrier\.\S+)$")
UNLISTED = re.compile(r"^(?:ld|st)\.(?:param|local)|^ld\.global\.nc")
# In a .func (the library's cold failure paths) only ordered accesses and
# fences are listed: its plain stores fill the error record, and how the
# compiler splits or merges them is not the library's business.
ORDERED = re.compile(r"^(?:(?:ld|st)\.(?:relaxed|acquire|release|volatile)|red|atom|fence|membar|trap)\b")


def summarize(ptx):
    lines, pending, name, kind, ops = [], None, None, None, set()
    for line in ptx.splitlines():
        m = ENTRY.match(line)
        if m:
            pending = m.group(1), m.group(2)
            continue
        if pending and line.startswith("{"):
            (kind, name), pending, ops = pending, None, set()
            continue
        if pending and not line[:1].isspace() and line.rstrip().endswith(";"):
            pending = None  # a declaration, not a definition
        if name is None:
            continue
        if line.startswith("}"):
            lines.append(f"{name}: {' '.join(sorted(ops))}".rstrip())
            name = None
            continue
        text = line.strip()
        if text.startswith("@"):  # a predicated instruction
            text = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
        words = text.split(None, 1)
        if not words:
            continue
        op = words[0].rstrip(";")
        if kind == "func" and not ORDERED.match(op):
            continue
        if LISTED.match(op) and not UNLISTED.match(op) or op == "trap":
            ops.add(op)
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ptx-summary", action="store_true")
    p.add_argument("--rules-prefix", action="append", default=[],
                   help="a second FileCheck run with only this prefix, for "
                        "-NOT rules that must hold over the whole input")
    p.add_argument("output")
    p.add_argument("filecheck")
    p.add_argument("checkfile")
    p.add_argument("compile", nargs="+", help="after --: the compile command")
    opts, fc_args = p.parse_known_args()
    cmd = list(opts.compile)
    mutant = os.environ.get("TLE_MUTATION", "")
    if mutant not in ("", "0"):
        cmd.append(f"-DTLE_MUTATION={int(mutant)}")
        print(f"check_compiled: mutant {mutant}", file=sys.stderr)
    subprocess.run(cmd + ["-o", opts.output], check=True)
    with open(opts.output) as f:
        text = f.read()
    if opts.ptx_summary:
        text = summarize(text)
        with open(opts.output + ".summary", "w") as f:
            f.write(text)
    rc = 0
    for prefix in [None] + opts.rules_prefix:
        extra = [f"--check-prefix={prefix}"] if prefix else fc_args
        r = subprocess.run([opts.filecheck, opts.checkfile, *extra],
                           input=text, text=True)
        rc = rc or r.returncode
    sys.exit(rc)


if __name__ == "__main__":
    main()
