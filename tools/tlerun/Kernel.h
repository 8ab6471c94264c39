//===- Kernel.h - A kernel ready to launch, and how tlerun gets one -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tlerun's runtime core launches a LoadedKernel; where it came from (a
// bundle, or MLIR compiled in-process) is decided by loadKernel. The
// in-process compiler lives in JitCompile.cpp, linked only when TLE is built
// with the compiler; NoCompile.cpp stands in for it otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_KERNEL_H
#define TLE_TOOLS_TLERUN_KERNEL_H

#include "Options.h"
#include "tle/Bundle/Bundle.h"

#include <memory>
#include <string>

namespace tle::run {

/// A kernel and the code to launch it.
struct LoadedKernel {
  BundleKernel meta;
  /// Host target: the packed entry `void NAME(void **args)`.
  void (*hostEntry)(void **args) = nullptr;
  /// Cuda target: the PTX holding the kernel.
  std::string ptx;
  /// Keeps JIT-compiled code alive.
  std::shared_ptr<void> owner;
};

/// Whether this tlerun can compile MLIR (built with the compiler).
bool haveCompiler();

/// Compiles MLIR `source` (from file `path`) for `options.target`, or, for a
/// host bundle, JIT-compiles its LLVM IR. Returns false with `error` set.
/// Enters the bundle's call sites into the process's table
/// (tleSiteRegister), so that reports of its failed waits name their lines.
void registerSites(const ::tle::run::Bundle &bundle);

bool compileKernel(const Options &options, const std::string &path,
                   const std::string &source, const Bundle *hostBundle,
                   LoadedKernel &out, std::string &error);

/// Reads `options.input` (a bundle or MLIR) and produces the kernel to run.
bool loadKernel(const Options &options, LoadedKernel &out, std::string &error);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_KERNEL_H
