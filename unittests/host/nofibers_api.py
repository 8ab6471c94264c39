#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every function tle/emu.h declares TLE_API is defined by the sources of the
emulator's build without Boost.Context (runtime/host/emu/CMakeLists.txt's
else branch), so that tools linking libtle (tlerun) link there too. The
GPU machines have no Boost.Context: the GPU preset's tlerun once failed to
link for want of setFatalHook. The device hooks (TLE_EMU_HOOK, from
abi.def) are left out: libtle's own --no-undefined link checks those.

    nofibers_api.py ROOT
"""
import re
import sys
from pathlib import Path

root = Path(sys.argv[1])
header = (root / "runtime/include/tle/emu.h").read_text()
cmake = (root / "runtime/host/emu/CMakeLists.txt").read_text()
# The fiber-less build: add_library(tle_emu OBJECT ...) in the else() branch.
fibers = cmake.index("if(TLE_EMU_HAS_FIBERS)")
branch = cmake[cmake.index("else()", fibers):]
sources = re.search(r"add_library\(tle_emu OBJECT([^)]*)\)", branch).group(1).split()
text = "".join((root / "runtime/host/emu" / s).read_text() for s in sources)

declared = []
for m in re.finditer(r"^TLE_API\s+[^;(]*?\b(\w+)\s*\(", header, re.M):
    declared.append(m.group(1))
missing = [n for n in declared
           if not re.search(r"\b%s\s*\([^;{]*\)\s*(const\s*)?\{" % n, text)]
if not declared:
    sys.exit("nofibers_api: no TLE_API functions found in tle/emu.h")
if missing:
    sys.exit("nofibers_api: declared in tle/emu.h but not defined by the "
             "fiber-less emulator (%s): %s" % (" ".join(sources), ", ".join(missing)))
print("nofibers_api: %d functions, all defined by %s" % (len(declared), " ".join(sources)))
