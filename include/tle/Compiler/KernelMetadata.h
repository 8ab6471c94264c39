//===- KernelMetadata.h - Bundle metadata of kernels ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The metadata tlec writes into a bundle next to the code, read from the
// kernel module before lowering: kernel names and parameter types, whether a
// co-resident (cooperative) launch is needed because of a `group grid`
// barrier, and how many barrier slots, signal words and counter words the
// kernel's constant indices need. Barriers, signals and counters are found
// over the kernel's call graph, so one inside a helper function counts like
// one in the kernel itself.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_COMPILER_KERNELMETADATA_H
#define TLE_COMPILER_KERNELMETADATA_H

#include "tle/Bundle/Bundle.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace mlir::tle {

/// Collects the metadata of every kernel in the gpu.modules of `module`.
/// Fails, with a located diagnostic, on an unsupported parameter type, a
/// kernel name that is not a C identifier or is used twice, or a module
/// without kernels.
FailureOr<std::vector<::tle::run::BundleKernel>>
collectKernelMetadata(ModuleOp module);

/// The table of call sites of `module`'s barrier, session-barrier, signal,
/// signal-wait, counter-wait and shadow-wait ops (the ids convert-tle-to-llvm
/// passes with sites=true), one entry per id, in the order of the ops.
std::vector<::tle::run::BundleSite> collectCallSites(ModuleOp module);

} // namespace mlir::tle

#endif // TLE_COMPILER_KERNELMETADATA_H
