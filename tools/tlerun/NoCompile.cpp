//===- NoCompile.cpp - tlerun without the in-process compiler -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Linked instead of JitCompile.cpp when TLE is built without LLVM (the GPU
// machines): tlerun then runs cuda bundles only.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

bool tle::run::haveCompiler() { return false; }

bool tle::run::compileKernel(const Options &, const std::string &path,
                             const std::string &, const Bundle *,
                             LoadedKernel &, std::string &error) {
  error = "cannot compile '" + path +
          "': this tlerun was built without the compiler";
  return false;
}
