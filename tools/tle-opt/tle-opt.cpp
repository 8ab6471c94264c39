//===- tle-opt.cpp - The TLE optimizer driver -----------------------------===//
//
// An mlir-opt with the `tle` dialect and its conversion pass added, so that a
// whole GPU kernel pipeline (tle lowering, gpu-lower-to-nvvm-pipeline, PTX
// serialization by gpu-module-to-binary) runs in one tool.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tle::registerTLEConversionPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary needs the NVVM target attribute's serializer and
  // the translations of every dialect that reaches LLVM IR.
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::tle::TLEDialect>();
  mlir::tle::registerConvertTLEToLLVMInterface(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TLE optimizer driver\n", registry));
}
