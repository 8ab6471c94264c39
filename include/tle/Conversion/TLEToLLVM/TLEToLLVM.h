//===- TLEToLLVM.h - Lowering of tle ops to ABI calls -----------*- C++ -*-===//
//
// The patterns that lower the `tle` dialect to calls of the device ABI, for
// use inside a larger LLVM lowering. The standalone pass is declared in
// tle/Conversion/Passes.h.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H
#define TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H

namespace mlir {
class LLVMTypeConverter;
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
/// function, declaring the callee in the nearest symbol table.
void populateTLEToLLVMConversionPatterns(const LLVMTypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         BarrierABI abi = BarrierABI::Scalar);

} // namespace tle
} // namespace mlir

#endif // TLE_CONVERSION_TLETOLLVM_TLETOLLVM_H
