#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks docs/environment.md against the code: every environment variable
named TLE_* that the sources read (C/C++ getenv and string literals that
name one, Python string literals, shell ${TLE_...} references, CMake
$ENV{TLE_...}) has a row in the document's table, and every row names a
variable that is still read. Prints the differences and exits 1, or prints
the count and exits 0. Usage: check-env-doc.py [REPO]"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
NAME = r"TLE_[A-Z0-9_]*[A-Z0-9]"
# What reads the environment, per kind of file. C/C++ string literals that
# name a TLE_ variable are its getenv calls and the messages about it; a
# literal naming a macro (a message about TLE_CONFIG_INITIALIZER) is not one.
C_FILES = (".c", ".cpp", ".h", ".hpp", ".cu", ".def")
PATTERNS = {
    C_FILES: [rf'"({NAME})[="\']'],
    (".py",): [rf'["\']({NAME})["\']'],
    (".sh",): [rf"\$\{{?({NAME})\b"],
    (".cmake", "CMakeLists.txt"): [rf"\$ENV\{{({NAME})\}}"],
}
# Test files set variables for the code they test; what they read
# themselves (and tests/ helpers) is covered by the code they test.
SKIP = ("test/", "unittests/", "python/tests/", "fuzz/", "docs/")

files = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True,
                       check=True).stdout.split()
read: dict[str, set[str]] = {}
for rel in files:
    if rel.startswith(SKIP):
        continue
    for suffixes, patterns in PATTERNS.items():
        if rel.endswith(suffixes):
            text = (repo / rel).read_text(errors="replace")
            for pattern in patterns:
                for name in re.findall(pattern, text):
                    read.setdefault(name, set()).add(rel)

macros = set()
for rel in files:
    if rel.endswith(C_FILES):
        macros |= set(re.findall(rf"#\s*define\s+({NAME})\b", (repo / rel).read_text(errors="replace")))
for name in macros & set(read):
    del read[name]

doc = (repo / "docs" / "environment.md").read_text()
documented = set(re.findall(rf"^\| `({NAME})` \|", doc, re.M))

missing = sorted(set(read) - documented)
stale = sorted(documented - set(read))
for name in missing:
    print(f"{name}: read by {', '.join(sorted(read[name]))} but not in docs/environment.md")
for name in stale:
    print(f"{name}: in docs/environment.md but read nowhere")
if missing or stale:
    sys.exit(1)
print(f"docs/environment.md names all {len(documented)} TLE_* environment variables the sources read")
