//===- tle-lower.cpp - An out-of-tree tool embedding the tle dialect ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The smallest mlir-opt a kernel compiler would build on TLE: the tle and
// LLVM dialects and the one pass convert-tle-to-llvm, from the installed
// TLE::TLEToLLVM library and its TableGen'd headers.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/Passes.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::tle::registerConvertTLEToLLVMPass();
  mlir::DialectRegistry registry;
  registry.insert<mlir::tle::TLEDialect, mlir::LLVM::LLVMDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tle-lower: tle ops to device ABI calls\n", registry));
}
