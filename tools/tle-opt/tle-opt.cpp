//===- tle-opt.cpp - The TLE optimizer driver -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// An mlir-opt with the `tle` dialect, its passes and TLE's pipelines added,
// so that a whole GPU kernel pipeline (tle lowering,
// gpu-lower-to-nvvm-pipeline or tle-cuda-pipeline, PTX serialization by
// gpu-module-to-binary) or the emulator's tle-host-pipeline runs in one
// tool.
//
//===----------------------------------------------------------------------===//

#include "tle/Compiler/Pipelines.h"
#include "tle/version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

static void printVersion(llvm::raw_ostream &os) {
  os << "tle-opt (TLE) " << TLE_VERSION_STRING << "\n  LLVM/MLIR "
     << LLVM_VERSION_STRING << "\n";
}

int main(int argc, char **argv) {
  // Every upstream pass, TLE's passes and the tle-cuda-pipeline and
  // tle-host-pipeline pipelines.
  mlir::tle::registerCompilerPasses();
  llvm::cl::AddExtraVersionPrinter(printVersion);

  // Every upstream dialect, the NVVM target attribute's serializer (for
  // gpu-module-to-binary), every translation to LLVM IR, and tle with its
  // convert-to-llvm interface.
  mlir::DialectRegistry registry;
  mlir::tle::registerCompilerDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TLE optimizer driver\n", registry));
}
