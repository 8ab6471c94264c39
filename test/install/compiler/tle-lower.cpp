//===- tle-lower.cpp - An out-of-tree tool embedding the tle dialect ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The smallest mlir-opt a kernel compiler would build on TLE (the README's
// "An MLIR-based compiler" builds it with the CMakeLists.txt beside it): the
// tle and LLVM dialects, the pass convert-tle-to-llvm, MLIR's generic
// convert-to-llvm, and the dialect's to-LLVM interface, with which the
// generic pass lowers tle ops too. TLE_LOWER_NO_INTERFACE=1 leaves the
// interface out, which is how scripts/test-install.sh checks that forgetting it
// is an error, not a silent no-op.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  mlir::tle::registerConvertTLEToLLVMPass();
  mlir::registerPass([] { return mlir::createConvertToLLVMPass(); });
  mlir::DialectRegistry registry;
  registry.insert<mlir::tle::TLEDialect, mlir::LLVM::LLVMDialect>();
  const char *skip = std::getenv("TLE_LOWER_NO_INTERFACE");
  if (!skip || std::strcmp(skip, "1") != 0)
    mlir::tle::registerConvertTLEToLLVMInterface(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tle-lower: tle ops to device ABI calls\n", registry));
}
