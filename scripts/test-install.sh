#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The installed package, used from outside the tree (CI's "install" suite):
# installs the already-built build/ into a temporary prefix (nothing is
# recompiled), then, with copies of test/install/ outside the source tree,
#   1. checks the SONAME (libtle.so.MAJOR) and the version file;
#   2. builds and runs the runtime consumer (find_package(TLE), TLE::tle: a
#      barrier kernel on 4 emulated ranks, and a C file on the C API), and
#      the same C file with pkg-config alone;
#   3. builds the compiler consumer (find_package(TLE COMPONENTS Compiler):
#      an mlir-opt-style tool on TLE::TLEToLLVM) and lowers a tle op with it;
#   4. runs the installed tools: tle-opt --version, tlec compiling an example
#      for cuda with the installed bitcode, tlerun running it on the emulator.
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
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -DTLE_CONSUMER_C_MAIN src/runtime/version.c -o capi \
  $(pkg-config --cflags --libs tle) -Wl,-rpath,"$(pkg-config --variable=libdir tle)"
./capi | grep -q "^C API $version: invalid argument" || fail "the C program built with pkg-config"
say "runtime consumer (TLE::tle, C++ and C) and pkg-config tle: OK"

# 3. The dialect in an out-of-tree compiler.
cmake -S src/compiler -B compiler -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_PREFIX_PATH="$prefix" >compiler.log ||
  { cat compiler.log; fail "configuring the compiler consumer"; }
cmake --build compiler >>compiler.log || { cat compiler.log; fail "building the compiler consumer"; }
lowered=$(compiler/tle-lower src/compiler/barrier.mlir --convert-tle-to-llvm)
grep -q "llvm.call @flagcxIntraBarrierSyncS(" <<<"$lowered" &&
  grep -q "llvm.call @flagcxDevCommGetIntraRank(" <<<"$lowered" &&
  ! grep -q "tle\." <<<"$lowered" || { echo "$lowered"; fail "tle-lower did not lower the tle ops"; }
say "compiler consumer (TLE::TLEToLLVM, TLE::TLEDialect): tle ops lowered to ABI calls"

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
echo "test-install: every check passed"
