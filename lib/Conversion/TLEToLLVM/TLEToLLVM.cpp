//===- TLEToLLVM.cpp - Lower tle ops to device ABI calls ------------------===//
//
// Lowers every `tle` op to one `llvm.call` of an extern "C" device function
// (docs/abi.md). All patterns share one helper that declares the callee in the
// nearest symbol table and emits the call, in the manner of IREE's "call this
// runtime function" lowerings; the per-op patterns only marshal arguments.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Conversion/Passes.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tle {
#define GEN_PASS_DEF_CONVERTTLETOLLVM
#include "tle/Conversion/Passes.h.inc"
} // namespace mlir::tle

using namespace mlir;
using namespace mlir::tle;

//===----------------------------------------------------------------------===//
// ABI encodings (docs/abi.md; FlagCX's values, so IR links against either)
//===----------------------------------------------------------------------===//

namespace {
namespace abi {
constexpr int32_t kCoopThread = 0;
constexpr int32_t kCoopWarp = 1;
constexpr int32_t kCoopBlock = 2;
// 3 is FlagCX's TILE_SPAN and 4 its LANES; neither is a dialect group, and
// the grid group never travels as a coopKind.

constexpr int32_t kOrderRelaxed = 0;
constexpr int32_t kOrderAcquire = 1;
constexpr int32_t kOrderRelease = 2;
constexpr int32_t kOrderAcqRel = 3;
constexpr int32_t kOrderSeqCst = 4;

constexpr int32_t kTeamIntra = 0;
constexpr int32_t kScopeSystem = 0;
constexpr int32_t kDefaultContext = 0;
} // namespace abi
} // namespace

/// The coopKind of a non-grid group.
static int32_t encodeCoopKind(BarrierGroup group) {
  switch (group) {
  case BarrierGroup::thread:
    return abi::kCoopThread;
  case BarrierGroup::warp:
    return abi::kCoopWarp;
  case BarrierGroup::block:
    return abi::kCoopBlock;
  case BarrierGroup::grid:
    break;
  }
  llvm_unreachable("group grid has its own entry points, no coopKind");
}

static int32_t encodeOrder(MemoryOrder order) {
  switch (order) {
  case MemoryOrder::relaxed:
    return abi::kOrderRelaxed;
  case MemoryOrder::acquire:
    return abi::kOrderAcquire;
  case MemoryOrder::release:
    return abi::kOrderRelease;
  case MemoryOrder::acq_rel:
    return abi::kOrderAcqRel;
  case MemoryOrder::seq_cst:
    return abi::kOrderSeqCst;
  }
  llvm_unreachable("unknown memory order");
}

/// The part of a barrier function's name that names the kind.
static StringRef kindName(BarrierKind kind) {
  switch (kind) {
  case BarrierKind::arrive:
    return "Arrive";
  case BarrierKind::wait:
    return "Wait";
  case BarrierKind::sync:
    return "Sync";
  }
  llvm_unreachable("unknown barrier kind");
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Replaces `op` by a call of the device function `callee` on `args`,
/// declaring `callee` (returning `resultType`) in the nearest symbol table
/// (`gpu.module` or `builtin.module`) unless it is declared already.
static LogicalResult replaceWithRuntimeCall(ConversionPatternRewriter &rewriter,
                                            Operation *op, StringRef callee,
                                            Type resultType, ValueRange args) {
  Operation *symbolTable = op->getParentWithTrait<OpTrait::SymbolTable>();
  if (!symbolTable)
    return rewriter.notifyMatchFailure(op, "no enclosing symbol table");
  SmallVector<Type> argTypes(args.getTypes());
  FailureOr<LLVM::LLVMFuncOp> func = LLVM::lookupOrCreateFn(
      rewriter, symbolTable, callee, argTypes, resultType);
  if (failed(func))
    return failure();
  auto call = LLVM::CallOp::create(rewriter, op->getLoc(), *func, args);
  rewriter.replaceOp(op, call->getResults());
  return success();
}

/// Returns `handle` as a generic (address space 0) pointer, which is what
/// every ABI function takes: raw i64 addresses are converted with inttoptr,
/// pointers in other address spaces with addrspacecast.
static Value toGenericPointer(OpBuilder &builder, Location loc, Value handle) {
  auto ptrType = LLVM::LLVMPointerType::get(builder.getContext());
  if (isa<IntegerType>(handle.getType()))
    return LLVM::IntToPtrOp::create(builder, loc, ptrType, handle);
  if (cast<LLVM::LLVMPointerType>(handle.getType()).getAddressSpace() != 0)
    return LLVM::AddrSpaceCastOp::create(builder, loc, ptrType, handle);
  return handle;
}

static Value createI32(OpBuilder &builder, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(builder, loc, builder.getI32Type(), value);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

struct DeviceIntraBarrierOpLowering
    : ConvertOpToLLVMPattern<DeviceIntraBarrierOp> {
  DeviceIntraBarrierOpLowering(const LLVMTypeConverter &converter,
                               BarrierABI abi)
      : ConvertOpToLLVMPattern(converter), abi(abi) {}

  LogicalResult
  matchAndRewrite(DeviceIntraBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool isGrid = op.getGroup() == BarrierGroup::grid;
    // FlagCX's unified form has no multimem parameter; dropping the flag
    // silently is what FlagTree did and what TLE must not repeat.
    if (!isGrid && abi == BarrierABI::Unified && op.getMultimem())
      return op.emitOpError(
          "multimem is not expressible in the unified ABI; use abi=scalar");

    Location loc = op.getLoc();
    Type voidType = LLVM::LLVMVoidType::get(getContext());
    Value comm = toGenericPointer(rewriter, loc, adaptor.getComm());
    Value index = adaptor.getIndex();
    Value order = createI32(rewriter, loc, encodeOrder(op.getOrder()));
    Value multimem = LLVM::ConstantOp::create(
        rewriter, loc, rewriter.getI1Type(), op.getMultimem() ? 1 : 0);
    StringRef kind = kindName(op.getKind());

    if (isGrid)
      return replaceWithRuntimeCall(rewriter, op,
                                    ("tleIntraGridBarrier" + kind + "S").str(),
                                    voidType, {comm, index, multimem, order});

    Value coop = createI32(rewriter, loc, encodeCoopKind(op.getGroup()));
    if (abi == BarrierABI::Scalar)
      return replaceWithRuntimeCall(
          rewriter, op, ("flagcxIntraBarrier" + kind + "S").str(), voidType,
          {comm, coop, index, multimem, order});

    Value team = createI32(rewriter, loc, abi::kTeamIntra);
    Value context = createI32(rewriter, loc, abi::kDefaultContext);
    Value scope = createI32(rewriter, loc, abi::kScopeSystem);
    return replaceWithRuntimeCall(
        rewriter, op, ("flagcxDevBarrier" + kind).str(), voidType,
        {comm, team, index, context, coop, order, scope});
  }

  BarrierABI abi;
};

struct IntraRankOpLowering : ConvertOpToLLVMPattern<IntraRankOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(IntraRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value comm = toGenericPointer(rewriter, op.getLoc(), adaptor.getComm());
    return replaceWithRuntimeCall(rewriter, op, "flagcxDevCommGetIntraRank",
                                  rewriter.getI32Type(), {comm});
  }
};

struct IntraSizeOpLowering : ConvertOpToLLVMPattern<IntraSizeOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(IntraSizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value comm = toGenericPointer(rewriter, op.getLoc(), adaptor.getComm());
    return replaceWithRuntimeCall(rewriter, op, "flagcxDevCommGetIntraSize",
                                  rewriter.getI32Type(), {comm});
  }
};

struct LocalPointerOpLowering : ConvertOpToLLVMPattern<LocalPointerOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(LocalPointerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value mem = toGenericPointer(rewriter, op.getLoc(), adaptor.getMem());
    return replaceWithRuntimeCall(rewriter, op, "flagcxGetLocalPointerS",
                                  op.getType(), {mem, adaptor.getOffset()});
  }
};

struct IntraPointerOpLowering : ConvertOpToLLVMPattern<IntraPointerOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(IntraPointerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value mem = toGenericPointer(rewriter, op.getLoc(), adaptor.getMem());
    return replaceWithRuntimeCall(
        rewriter, op, "flagcxGetIntraPointerS", op.getType(),
        {mem, adaptor.getOffset(), adaptor.getPeer()});
  }
};

} // namespace

void mlir::tle::populateTLEToLLVMConversionPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns,
    BarrierABI abi) {
  patterns.add<DeviceIntraBarrierOpLowering>(converter, abi);
  patterns.add<IntraRankOpLowering, IntraSizeOpLowering, LocalPointerOpLowering,
               IntraPointerOpLowering>(converter);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace mlir::tle {
namespace {

struct ConvertTLEToLLVMPass : impl::ConvertTLEToLLVMBase<ConvertTLEToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    // The patterns add callee declarations to the symbol table enclosing
    // each op; that table must be inside what this pass may modify.
    if (!root->hasTrait<OpTrait::SymbolTable>()) {
      root->emitError("convert-tle-to-llvm must run on an op with a symbol "
                      "table, such as builtin.module");
      return signalPassFailure();
    }

    MLIRContext *context = &getContext();
    LLVMTypeConverter converter(context);
    RewritePatternSet patterns(context);
    populateTLEToLLVMConversionPatterns(converter, patterns, abi);

    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<TLEDialect>();
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::tle
