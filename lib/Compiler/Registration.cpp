//===- Registration.cpp - What the tlec pipelines need registered ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Kernels may use any upstream dialect that lowers to LLVM, so tlec, tlerun
// and tle-opt register all of them, their to-LLVM interfaces and
// translations, the NVVM target's serializer, and the tle dialect, passes
// and pipelines. Also the host optimization step, which reuses MLIR's
// ExecutionEngine utilities.
//
//===----------------------------------------------------------------------===//

#include "HostPipeline.h"

#include "tle/Compiler/Pipelines.h"

#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

using namespace mlir;

void mlir::tle::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<TLEDialect>();
  registerConvertTLEToLLVMInterface(registry);
}

namespace {
/// tle-host-pipeline's options.
struct HostPipelineOptions : mlir::PassPipelineOptions<HostPipelineOptions> {
  Option<mlir::tle::BarrierABI> abi{
      *this, "abi", llvm::cl::desc("Barrier entry points to call"),
      llvm::cl::init(mlir::tle::BarrierABI::Scalar),
      llvm::cl::values(
          clEnumValN(mlir::tle::BarrierABI::Scalar, "scalar", "flagcxIntraBarrier*S"),
          clEnumValN(mlir::tle::BarrierABI::Unified, "unified",
                     "flagcxDevBarrier*"))};
};
/// tle-cuda-pipeline's options (CompileOptions as pipeline options).
struct CudaPipelineOptions : mlir::PassPipelineOptions<CudaPipelineOptions> {
  Option<mlir::tle::BarrierABI> abi{
      *this, "abi", llvm::cl::desc("Barrier entry points to call"),
      llvm::cl::init(mlir::tle::BarrierABI::Scalar),
      llvm::cl::values(
          clEnumValN(mlir::tle::BarrierABI::Scalar, "scalar", "flagcxIntraBarrier*S"),
          clEnumValN(mlir::tle::BarrierABI::Unified, "unified",
                     "flagcxDevBarrier*"))};
  Option<std::string> arch{
      *this, "arch", llvm::cl::desc("GPU architecture (sm_70 or newer)"),
      llvm::cl::init("sm_90")};
  Option<std::string> deviceLib{
      *this, "device-lib",
      llvm::cl::desc("Device library bitcode to link at serialization")};
  Option<unsigned> optLevel{
      *this, "O", llvm::cl::desc("Optimization level 0-3"), llvm::cl::init(3)};
};
} // namespace

void mlir::tle::registerCompilerPasses() {
  registerAllPasses();
  registerTLEConversionPasses();
  static bool once = [] {
    PassPipelineRegistration<HostPipelineOptions>(
        "tle-host-pipeline",
        "Lower a kernel module for the CPU emulator (tlec --target=host)",
        [](OpPassManager &pm, const HostPipelineOptions &options) {
          buildHostPipeline(pm, options.abi);
        });
    PassPipelineRegistration<CudaPipelineOptions>(
        "tle-cuda-pipeline",
        "Lower a kernel module to the LLVM and NVVM dialects with an NVVM "
        "target attached (tlec --target=cuda, before serialization)",
        [](OpPassManager &pm, const CudaPipelineOptions &options) {
          CompileOptions compile;
          compile.abi = options.abi;
          compile.arch = options.arch;
          compile.deviceLibrary = options.deviceLib;
          compile.optLevel = options.optLevel;
          buildCudaPipeline(pm, compile);
        });
    return true;
  }();
  (void)once;
}

void mlir::tle::optimizeHostModule(llvm::Module &module, unsigned optLevel) {
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  llvm::consumeError(transformer(&module));
}
