//===- HostPipeline.h - Internals of the host lowering ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What Compile.cpp needs from HostPipeline.cpp and CudaPipeline.cpp beyond
// the public pipelines: the translations to LLVM IR and their callbacks.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_LIB_COMPILER_HOSTPIPELINE_H
#define TLE_LIB_COMPILER_HOSTPIPELINE_H

#include "tle/Compiler/Pipelines.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir::tle {

/// Translates a module lowered by tle-host-pipeline to LLVM IR for the host,
/// adding the host C calling convention's `zeroext` on `i1` parameters of
/// external calls (the device ABI's `bool multimem`).
std::unique_ptr<llvm::Module> translateHostModule(ModuleOp module,
                                                  llvm::LLVMContext &context);

/// Runs LLVM's default optimization pipeline at `optLevel` on a host module.
void optimizeHostModule(llvm::Module &module, unsigned optLevel);

/// The output of serializing lowered `gpu.module`s.
struct CudaArtifacts {
  std::string ptx;
  /// The LLVM IR after linking the device library and optimizing.
  std::string optimizedLLVM;
};

/// Runs MLIR's GPU serialization on a module lowered by tle-cuda-pipeline:
/// translation to LLVM IR, bitcode linking (only the needed functions, then
/// internalized), optimization and PTX emission.
FailureOr<CudaArtifacts> serializeToPTX(ModuleOp module,
                                        const CompileOptions &options);

} // namespace mlir::tle

#endif // TLE_LIB_COMPILER_HOSTPIPELINE_H
