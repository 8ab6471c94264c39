//===- TLEDialect.cpp - The tle dialect -----------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Registers the ops of the `tle` dialect and holds the generated dialect and
// enum definitions. The dialect always carries its to-LLVM interface, so
// that MLIR's generic --convert-to-llvm never passes over a tle op: the
// interface adds the lowering's patterns (TLEToLLVM, which depends on this
// library, hands them over through registerConvertTLEToLLVMInterface), or,
// in a tool that never registered them, makes every tle op an error that
// names the missing call. MLIR's promised interfaces are checked only in
// debug builds of MLIR, so Debian's would pass silently.
//
//===----------------------------------------------------------------------===//

#include "tle/Dialect/TLE/IR/TLEDialect.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tle;

#include "tle/Dialect/TLE/IR/TLEDialect.cpp.inc"
#include "tle/Dialect/TLE/IR/TLEEnums.cpp.inc"

namespace {
/// Every tle op, when the lowering's patterns were never registered: an
/// error naming the call that registers them.
struct UnregisteredLowering : ConversionPattern {
  explicit UnregisteredLowering(MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>,
                                ConversionPatternRewriter &) const override {
    if (!isa<TLEDialect>(op->getDialect()))
      return failure();
    return op->emitError("the tle dialect's lowering to LLVM is not "
                         "registered in this tool: call "
                         "mlir::tle::registerConvertTLEToLLVMInterface("
                         "registry) (tle/Conversion/TLEToLLVM/TLEToLLVM.h, "
                         "TLE::TLEToLLVM), or run --convert-tle-to-llvm");
  }
};

/// What --convert-to-llvm asks of the dialect.
struct TLEToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;

  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &typeConverter,
      RewritePatternSet &patterns) const final {
    target.addIllegalDialect<TLEDialect>();
    auto *tle = static_cast<TLEDialect *>(getDialect());
    if (tle->toLLVMPatterns)
      tle->toLLVMPatterns(typeConverter, patterns);
    else
      patterns.add<UnregisteredLowering>(patterns.getContext());
  }
};
} // namespace

void TLEDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tle/Dialect/TLE/IR/TLEOps.cpp.inc"
      >();
  addInterfaces<TLEToLLVMInterface>();
}
