//===- Registration.cpp - What the tlec pipelines need registered ---------===//
//
// Kernels may use any upstream dialect that lowers to LLVM, so tlec and
// tlerun register all of them, their to-LLVM interfaces and translations,
// the NVVM target's serializer, and the tle dialect and passes. Also the
// host optimization step, which reuses MLIR's ExecutionEngine utilities so
// the JIT and `tlec --emit=llvm --target=host` optimize alike.
//
//===----------------------------------------------------------------------===//

#include "tle/Compiler/Pipelines.h"

#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
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

void mlir::tle::registerCompilerPasses() {
  registerAllPasses();
  registerTLEConversionPasses();
}

void mlir::tle::optimizeHostModule(llvm::Module &module, unsigned optLevel) {
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  llvm::consumeError(transformer(&module));
}
