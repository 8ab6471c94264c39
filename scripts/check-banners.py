#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the first lines of every tracked source file of a git work tree
(the files scripts/spdx.sh gives the SPDX line). A C-family file (C, C++,
CUDA, TableGen, .def) starts with one whole LLVM-style banner line of at
most 80 columns,

  //===- NAME - WHAT IT IS FOR -------------------------------*- C++ -*-===//
  /*===- NAME - WHAT IT IS FOR ---------------------------------*- C -*-===*

NAME being the file's own name (a .in template may name what it
generates), with the SPDX line as line 2 (` * ` inside a /* */ banner)
and no piece of a banner after it. A file commented with `#` starts with
the SPDX line, after a `#!` line if it has one. Prints each file that
does not, with why, and exits 1; or prints the count and exits 0.

With --fix, joins a banner that a line break (clang-format's comment
reflow, or the SPDX line inserted into it) cut in two, and refits one
that is too long: the fill shrinks to one dash, then the `-*- LANG -*-`
mode tag goes; a description that still does not fit is left for a
person, and reported. Usage: check-banners.py [--fix] [REPO]"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SPDX = "SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"
WIDTH = 80
C_SUFFIXES = (".h", ".c", ".h.in", ".cpp", ".hpp", ".cu", ".cuh", ".cc",
              ".td", ".def")
HASH_SUFFIXES = (".py", ".py.in", ".sh", ".cmake", ".cmake.in", ".toml",
                 ".pc.in", ".map.in")
# Both banner forms: "//===- NAME - WHAT -...-*- LANG -*-===//" and the
# C API's "/*===- NAME - WHAT -...-*- C -*-===*", whose comment goes on.
BANNER = re.compile(
    r"^(?P<open>//|/\*)===-+ (?P<name>\S+) - (?P<what>\S.*?)"
    r"(?: -+(?P<tag>-\*- [A-Za-z+]+ -\*-)?| (?P<tag2>-\*- [A-Za-z+]+ -\*-))"
    r"===(?P<close>//|\*)$")
# What a cut leaves on the next line: "//-*-===//", "//===//", "//-*-=//",
# "//-------===//" (the full-width rule line is not a piece).
PIECE = re.compile(r"^//[-=*]*[-=]//$|^ \*[-=*]*===\*$")
RULE = "//" + "=" * 3 + "-" * (WIDTH - 10) + "=" * 3 + "//"


def tracked(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"],
                         check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def kind(path: str) -> str | None:
    base = path.rsplit("/", 1)[-1]
    if base.endswith(C_SUFFIXES):
        return "c"
    if base.endswith(HASH_SUFFIXES) or base == "CMakeLists.txt":
        return "hash"
    return None


def names_for(path: str) -> tuple[str, ...]:
    base = path.rsplit("/", 1)[-1]
    return (base, base[:-3]) if base.endswith(".in") else (base,)


def is_piece(line: str) -> bool:
    return line != RULE and bool(PIECE.match(line))


def build(open_: str, name: str, what: str, tag: str | None) -> str | None:
    """The banner of NAME and WHAT at WIDTH columns, with TAG if it fits."""
    close = "//" if open_ == "//" else "*"
    for t in ([tag, None] if tag else [None]):
        head = f"{open_}===- {name} - {what} "
        tail = (t or "") + "===" + close
        fill = WIDTH - len(head) - len(tail)
        if fill >= 1:
            return head + "-" * fill + tail
    return None


def check_c(path: str, lines: list[str]) -> str | None:
    if not lines:
        return "is empty"
    m = BANNER.match(lines[0])
    if not m:
        return "line 1 is not a whole banner: " + lines[0][:WIDTH]
    if len(lines[0]) > WIDTH:
        return f"line 1 is {len(lines[0])} columns, more than {WIDTH}"
    if m["name"] not in names_for(path):
        return f"the banner names {m['name']}, not the file"
    prefix = "// " if m["open"] == "//" else " * "
    if len(lines) < 2 or lines[1] != prefix + SPDX:
        return "line 2 is not the SPDX line"
    if len(lines) > 2 and is_piece(lines[2]):
        return "line 3 is a piece of a banner: " + lines[2]
    return None


def check_hash(lines: list[str]) -> str | None:
    first = 1 if lines and lines[0].startswith("#!") else 0
    if len(lines) <= first or lines[first] != "# " + SPDX:
        return f"line {first + 1} is not the SPDX line"
    return None


def fix_c(lines: list[str]) -> list[str] | None:
    """Lines with the banner joined and refitted, or None when it cannot be
    done by rule (no banner, or a description too long for one line)."""
    first = lines[0]
    if not first.startswith(("//===-", "/*===-")):
        return None
    open_ = first[:2]
    spdx = ("// " if open_ == "//" else " * ") + SPDX
    rest = lines[1:]
    text = first
    # The pieces a cut left, before or after the SPDX line.
    pieces = []
    for i in range(min(2, len(rest))):
        if rest[i] == spdx:
            continue
        if is_piece(rest[i]):
            pieces.append(i)
        break
    for i in pieces:
        text = text.rstrip() + rest[i][2:].lstrip()
    if text.startswith("//") and text.count("-*-") == 2:
        # "...-*- C++" + "-*-===//": the tag's halves lost their space.
        text = re.sub(r"-\*- ([A-Za-z+]+)-\*-", r"-*- \1 -*-", text)
    rest = [line for i, line in enumerate(rest) if i not in pieces]
    m = re.match(
        r"^(//|/\*)===-+ (\S+) - (.*?)\s*-*(-\*- [A-Za-z+]+ -\*-)?[-=]*(//|\*)?$",
        text)
    if not m:
        return None
    line = build(open_, m[2], m[3].rstrip(" -"), m[4])
    if line is None:
        return None
    if not rest or rest[0] != spdx:
        rest.insert(0, spdx)
    return [line] + rest


def main(argv: list[str]) -> int:
    fix = "--fix" in argv
    args = [a for a in argv if a != "--fix"]
    repo = Path(args[0] if args else Path(__file__).resolve().parents[1])
    bad, fixed, checked = [], 0, 0
    for path in tracked(repo):
        k = kind(path)
        file = repo / path
        if k is None or not file.is_file():
            continue
        checked += 1
        text = file.read_text(encoding="utf-8", errors="surrogateescape")
        lines = text.split("\n")
        why = check_c(path, lines) if k == "c" else check_hash(lines)
        if why and fix and k == "c":
            new = fix_c(lines)
            if new is not None and check_c(path, new) is None:
                file.write_text("\n".join(new), encoding="utf-8",
                                errors="surrogateescape")
                fixed += 1
                continue
        if why:
            bad.append(f"{path}: {why}")
    for line in bad:
        print(line)
    if fix:
        print(f"banners: repaired {fixed} files")
    if bad:
        print(f"banners: {len(bad)} of {checked} source files do not start "
              "with a whole banner and the SPDX line (scripts/check-banners.py)",
              file=sys.stderr)
        return 1
    print(f"banners: all {checked} source files start with a whole banner "
          "and the SPDX line")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
