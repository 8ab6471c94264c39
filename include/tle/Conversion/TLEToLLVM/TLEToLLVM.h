//===- TLEToLLVM.h - Lowering of tle ops to ABI calls -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The patterns that lower the `tle` dialect to calls of the device ABI, for
// use inside a larger LLVM lowering. The standalone pass is declared in
// tle/Conversion/Passes.h.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H
#define TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace tle::abi {
struct Function;
} // namespace tle::abi

namespace mlir {
class DialectRegistry;
class LLVMTypeConverter;
class OpBuilder;
class RewritePatternSet;

namespace tle {

/// Which barrier entry points the lowering calls (see docs/abi.md).
enum class BarrierABI {
  /// flagcxIntraBarrier{Arrive,Wait,Sync}S.
  Scalar,
  /// flagcxDevBarrier{Arrive,Wait,Sync}.
  Unified,
};

/// Adds one pattern per `tle` op that replaces it by a call of its device
/// function, declaring the callee in the nearest symbol table. With
/// `sites`, barriers and signals call the `...At` twins with their op's
/// call-site id (callSiteOf).
void populateTLEToLLVMConversionPatterns(const LLVMTypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         BarrierABI abi = BarrierABI::Scalar,
                                         bool sites = false);

/// A call site: its id (tle::abi::siteId of `text`) and "file:line:col".
struct CallSiteText {
  uint32_t id = 0;
  std::string text;
};

/// The call site of an op at `loc`: its first FileLineColLoc (inside a
/// fused, name or call-site location too), or id 0 and no text.
CallSiteText callSiteOf(Location loc);

/// Declares the ABI function `fn` (an entry of tle/abi.h's tables) as an
/// `llvm.func` in `symbolTable` unless it is declared already, with the
/// LLVM types of its signature (every pointer generic).
FailureOr<LLVM::LLVMFuncOp>
lookupOrDeclareAbiFunction(OpBuilder &builder, Operation *symbolTable,
                           const ::tle::abi::Function &fn);

/// Makes the tle dialect take part in MLIR's `--convert-to-llvm` (the scalar
/// ABI, as convert-tle-to-llvm's default).
void registerConvertTLEToLLVMInterface(DialectRegistry &registry);

} // namespace tle
} // namespace mlir

#endif // TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H
