#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The installed package, used from outside the tree (CI's "install" suite):
# installs the already-built build/ into a temporary prefix (nothing is
# recompiled), then, with copies of test/install/ outside the source tree,
#   1. checks the SONAME (libtle.so.MAJOR) and the version file, and that
#      nothing lands in the prefix's root;
#   2. builds and runs the runtime consumer (find_package(TLE), TLE::tle: a
#      barrier kernel on 4 emulated ranks, a C file on the C API, and a C
#      kernel launched on the emulator with tleEmuLaunch), and the C files
#      with pkg-config alone, as the README writes the command; then the
#      same consumer against a split install (--component Runtime, then
#      Development, no Tools);
#   3. builds the compiler consumer (find_package(TLE COMPONENTS Compiler):
#      an mlir-opt-style tool on TLE::TLEToLLVM) and lowers a tle op with
#      it, with --convert-tle-to-llvm and with MLIR's --convert-to-llvm, and
#      checks that the tool without the dialect's to-LLVM interface fails
#      loudly on the latter;
#   4. runs the installed tools: tle-opt --version, tlec compiling an example
#      for cuda with the installed bitcode, tlerun running it on the emulator,
#      and the example compiled for the host and launched by a C program;
#   5. checks that the README's CMake snippets are the consumers'
#      CMakeLists.txt word for word, and that the runtime-only preset
#      configures without LLVM.
#   scripts/test-install.sh [BUILD_DIR]    (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
work=$(mktemp -d /tmp/tle-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
say() { echo "[test-install +${SECONDS}s] $*"; }
fail() {
  echo "test-install: FAILED: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
say "installed $build into $prefix ($(du -sh "$prefix" | cut -f1))"
# The private support code (runtime/support: the log, the JSON writer) is
# neither installed nor included by an installed header.
[ ! -e "$prefix/include/tle/support" ] || fail "tle/support/ is installed"
if grep -rlE 'tle/support/|tle/detail/(Log|Json)\.h' "$prefix/include"; then
  fail "installed headers (above) include TLE's private support headers"
fi
cp -r test/install "$work/src"
cd "$work"

# 1. The version, from the one place, in every form the package has.
major=$(sed -n 's/^#define TLE_VERSION_MAJOR \([0-9]*\)$/\1/p' "$prefix/include/tle/version.h")
version=$(sed -n 's/^#define TLE_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/tle/version.h")
project=$(sed -n 's/^project(tle VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ "$version" = "$project" ] || fail "version.h says $version, project() $project"
readelf -d "$prefix/lib/libtle.so.$version" | grep -q "SONAME.*\[libtle.so.$major\]" ||
  fail "libtle.so.$version has no SONAME libtle.so.$major"
grep -q "PACKAGE_VERSION \"$version\"" "$prefix/lib/cmake/TLE/TLEConfigVersion.cmake" ||
  fail "TLEConfigVersion.cmake is not of version $version"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion tle)" = "$version" ] || fail "tle.pc is not of version $version"
say "version $version: version.h, SONAME libtle.so.$major, TLEConfigVersion.cmake, tle.pc"
# Only folders at the prefix's root (the wheel's _version.py and LICENSE
# belong to the Python component, which only the wheel installs).
stray=$(find "$prefix" -mindepth 1 -maxdepth 1 -not -type d)
[ -z "$stray" ] || fail "files at the prefix's root: $stray"
# An empty RUNPATH entry (what a padded build RPATH leaves) makes the loader
# search the working directory.
for elf in "$prefix"/bin/* "$prefix/lib/libtle.so.$version"; do
  runpath=$(readelf -d "$elf" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
  case ":$runpath:" in *::*) [ -z "$runpath" ] || fail "$elf has an empty RUNPATH entry: '$runpath'" ;; esac
done

# 2. The runtime, from CMake and from pkg-config.
cmake -S src/runtime -B runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >runtime.log || { cat runtime.log; fail "configuring the runtime consumer"; }
cmake --build runtime >>runtime.log || { cat runtime.log; fail "building the runtime consumer"; }
out=$(runtime/barrier) || { echo "$out"; fail "the runtime consumer"; }
echo "$out"
grep -q "^barrier on 4 emulated ranks: OK" <<<"$out" || fail "the barrier kernel"
out=$(runtime/emu_kernel) || { echo "$out"; fail "the C kernel on the emulator"; }
echo "$out"
grep -q "^C kernel on 4 emulated ranks: OK" <<<"$out" &&
  grep -q "^out-of-range slot: .*: rank [0-9] block 1 thread [0-9]*: .*barrier slot 2 out of range" <<<"$out" ||
  fail "the C kernel's results"
# The README's command, then the program run with no LD_LIBRARY_PATH.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -DTLE_CONSUMER_C_MAIN src/runtime/version.c -o capi \
  $(pkg-config --cflags --libs tle) -Wl,-rpath,$(pkg-config --variable=libdir tle)
env -u LD_LIBRARY_PATH ./capi | grep -q "^C API $version: invalid argument" ||
  fail "the C program built with pkg-config"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror src/runtime/emu_kernel.c -o ckernel \
  $(pkg-config --cflags --libs tle) -Wl,-rpath,$(pkg-config --variable=libdir tle)
env -u LD_LIBRARY_PATH ./ckernel | grep -q "^C kernel on 4 emulated ranks: OK" ||
  fail "the C kernel built with pkg-config"
# One process per rank: a C program that tle.launch starts.
out=$(PYTHONPATH="$root/python" TLE_BUILD_DIR="$root/$build" "$root/.venv/bin/python" -m tle.launch \
  --ranks 3 --no-python runtime/launched 2>&1) || { echo "$out"; fail "tle.launch --no-python runtime/launched"; }
for r in 0 1 2; do
  grep -qx "\[rank$r\]: rank $r of 3: OK" <<<"$out" || { echo "$out"; fail "rank $r of the launched C program"; }
done
say "runtime consumer (TLE::tle: C++, C, a C kernel on the emulator) and pkg-config tle: OK"

# The README's split install: the library, then the headers and the
# package, without the tools.
split=$work/split
for component in Runtime Development; do
  cmake --install "$root/$build" --prefix "$split" --component "$component" >>"$work/install.log"
done
[ ! -e "$split/bin" ] || fail "the Runtime and Development components installed bin/: $(ls "$split/bin")"
cmake -S src/runtime -B runtime-split -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$split" >runtime-split.log || { cat runtime-split.log; fail "find_package(TLE) in a split install"; }
cmake --build runtime-split >>runtime-split.log || { cat runtime-split.log; fail "building against a split install"; }
runtime-split/barrier | grep -q "^barrier on 4 emulated ranks: OK" || fail "the consumer of a split install"
say "split install (--component Runtime, Development): find_package(TLE) and the consumer: OK"

# 3. The dialect in an out-of-tree compiler.
cmake -S src/compiler -B compiler -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_PREFIX_PATH="$prefix" >compiler.log ||
  { cat compiler.log; fail "configuring the compiler consumer"; }
cmake --build compiler >>compiler.log || { cat compiler.log; fail "building the compiler consumer"; }
for pass in --convert-tle-to-llvm --convert-to-llvm; do
  lowered=$(compiler/tle-lower src/compiler/barrier.mlir "$pass")
  grep -q "llvm.call @flagcxIntraBarrierSyncS(" <<<"$lowered" &&
    grep -q "llvm.call @flagcxDevCommGetIntraRank(" <<<"$lowered" &&
    ! grep -q "tle\." <<<"$lowered" || { echo "$lowered"; fail "tle-lower $pass did not lower the tle ops"; }
done
# Without the interface, MLIR's generic pass must not succeed with the tle
# ops left in place.
if lowered=$(TLE_LOWER_NO_INTERFACE=1 compiler/tle-lower src/compiler/barrier.mlir --convert-to-llvm 2>&1); then
  echo "$lowered"
  fail "--convert-to-llvm without registerConvertTLEToLLVMInterface exited 0"
fi
grep -q "the tle dialect's lowering to LLVM is not registered in this tool: call mlir::tle::registerConvertTLEToLLVMInterface" <<<"$lowered" || { echo "$lowered"; fail "no word of the missing interface"; }
say "compiler consumer (TLE::TLEToLLVM alone): tle ops lowered to ABI calls by both passes; no interface: an error"

# 4. The installed tools find libtle, libMLIR and the bitcode on their own.
env -u TLE_DEVICE_BC "$prefix/bin/tle-opt" --version | grep -q "tle-opt (TLE) $version" ||
  fail "installed tle-opt --version"
env -u TLE_DEVICE_BC "$prefix/bin/tlec" "$root/examples/allreduce.mlir" --target=cuda -o allreduce.bundle ||
  fail "installed tlec with the installed bitcode"
grep -q "^kernel allreduce " allreduce.bundle || fail "installed tlec wrote no allreduce kernel"
"$prefix/bin/tlerun" "$root/examples/allreduce.mlir" --kernel allreduce --ranks 2 --grid 2 \
  --buffer in:i32:2:iota --buffer out:i32:2 --dump out >dump.txt || fail "installed tlerun"
grep -q '"values": \[0, 2\]' dump.txt || { cat dump.txt; fail "installed tlerun's result"; }
say "installed tle-opt, tlec (cuda, installed bitcode) and tlerun: OK"
# A kernel compiled for the host, launched by a C program of one's own
# (docs/tools.md, "A compiled kernel in your own program").
env -u TLE_DEVICE_BC "$prefix/bin/tlec" "$root/examples/allreduce.mlir" --target=host --emit=llvm \
  -o allreduce.ll || fail "installed tlec --target=host --emit=llvm"
clang-22 -c -O1 -Wno-override-module allreduce.ll -o allreduce.o || fail "clang on tlec's host module"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror src/runtime/host_kernel.c allreduce.o -o hostkernel \
  $(pkg-config --cflags --libs tle) -Wl,-rpath,$(pkg-config --variable=libdir tle) ||
  fail "linking a tlec-compiled kernel into a C program"
./hostkernel | grep -q "^tlec-compiled allreduce from C on 2 emulated ranks: OK" ||
  fail "the tlec-compiled kernel launched from C"
say "a tlec --target=host kernel launched by a C program (__tle_entry.allreduce): OK"

# 5. The README's snippets are the files CI builds; the runtime preset.
python3 - "$root/README.md" src/runtime/CMakeLists.txt src/compiler/CMakeLists.txt <<'PY' || fail "the README's CMake snippets"
import re, sys
readme = open(sys.argv[1]).read()
blocks = re.findall(r"^```cmake\n(.*?)^```$", readme, re.S | re.M)
for path in sys.argv[2:]:
    text = open(path).read()
    body = text[text.index("\ncmake_minimum_required(") + 1:] if "compiler" in path else text
    if not any(b in text and (b == body or "compiler" not in path) for b in blocks):
        sys.exit(f"no cmake block of README.md is {path} as written")
PY
cmake --preset runtime -S "$root" -B "$work/runtime-preset" >runtime-preset.log 2>&1 ||
  { cat runtime-preset.log; fail "cmake --preset runtime"; }
grep -q "TLE_ENABLE_COMPILER:BOOL=OFF" "$work/runtime-preset/CMakeCache.txt" &&
  ! grep -q "^MLIR_DIR:PATH=/" "$work/runtime-preset/CMakeCache.txt" || fail "the runtime preset looked for MLIR"
say "README's CMake snippets are the consumers' files; cmake --preset runtime configures without LLVM"
echo "test-install: every check passed"
