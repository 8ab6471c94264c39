//===- TLEToLLVM.cpp - Lower tle ops to device ABI calls ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Lowers every `tle` op to one `llvm.call` of an extern "C" device function
// of the ABI defined in tle/abi.def (docs/abi.md). The callee's name and
// signature come from that definition (tle/abi.h's tables), never from a
// copy here; one helper declares a callee from its ABI entry and emits the
// call, in the manner of IREE's "call this runtime function" lowerings. The
// barriers and each signal op have their own pattern (they pick the entry
// point and encode their attributes and the constants FlagCX's signatures
// add); the team queries share one pattern that picks the entry point by
// team, and the other queries and the pointers one generic runtime-call
// pattern. The one-sided ops (put, get, put-value, flush, counters, signal
// shadows) have a pattern each, which picks FlagCX's variant for the
// attached signal and counter.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Conversion/Passes.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "tle/abi.h"

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
using ::tle::abi::Fn;

//===----------------------------------------------------------------------===//
// ABI encodings. The dialect's enum attributes store the ABI values of
// tle/abi.def (TLEEnums.td); these asserts make a disagreement a build
// error, and unittests/compiler checks every case both ways.
//===----------------------------------------------------------------------===//

static_assert(static_cast<int>(BarrierGroup::thread) == ::tle::kCoopThread &&
                  static_cast<int>(BarrierGroup::warp) == ::tle::kCoopWarp &&
                  static_cast<int>(BarrierGroup::block) == ::tle::kCoopBlock &&
                  static_cast<int>(BarrierGroup::grid) == ::tle::kCoopGrid,
              "TLEEnums.td's BarrierGroup must store abi.def's coop kinds");
static_assert(
    static_cast<int>(MemoryOrder::relaxed) == ::tle::kOrderRelaxed &&
        static_cast<int>(MemoryOrder::acquire) == ::tle::kOrderAcquire &&
        static_cast<int>(MemoryOrder::release) == ::tle::kOrderRelease &&
        static_cast<int>(MemoryOrder::acq_rel) == ::tle::kOrderAcqRel &&
        static_cast<int>(MemoryOrder::seq_cst) == ::tle::kOrderSeqCst,
    "TLEEnums.td's MemoryOrder must store abi.def's orders");
static_assert(static_cast<int>(SignalGroup::thread) == ::tle::kCoopThread &&
                  static_cast<int>(SignalGroup::warp) == ::tle::kCoopWarp &&
                  static_cast<int>(SignalGroup::block) == ::tle::kCoopBlock,
              "TLEEnums.td's SignalGroup must store abi.def's coop kinds");
static_assert(static_cast<int>(Team::intra) == ::tle::kTeamIntra &&
                  static_cast<int>(Team::inter) == ::tle::kTeamInter &&
                  static_cast<int>(Team::world) == ::tle::kTeamWorld,
              "TLEEnums.td's Team must store abi.def's team kinds");
static_assert(static_cast<int>(BarrierKind::arrive) == ::tle::kBarrierArrive &&
                  static_cast<int>(BarrierKind::wait) == ::tle::kBarrierWait &&
                  static_cast<int>(BarrierKind::sync) == ::tle::kBarrierSync,
              "TLEEnums.td's BarrierKind must store abi.def's barrier kinds");

/// The barrier entry point for `kind` in one of three families, each listed
/// in abi.def in arrive, wait, sync order.
static Fn barrierFunction(Fn arrive, BarrierKind kind) {
  return static_cast<Fn>(static_cast<unsigned>(arrive) +
                         static_cast<unsigned>(kind));
}
#define TLE_ASSERT_BARRIER_FAMILY(Arrive, Wait, Sync)                          \
  static_assert(static_cast<unsigned>(Fn::Wait) ==                             \
                        static_cast<unsigned>(Fn::Arrive) + 1 &&               \
                    static_cast<unsigned>(Fn::Sync) ==                         \
                        static_cast<unsigned>(Fn::Arrive) + 2,                 \
                "abi.def lists " #Arrive "'s family as arrive, wait, sync");
TLE_ASSERT_BARRIER_FAMILY(flagcxIntraBarrierArriveS, flagcxIntraBarrierWaitS,
                          flagcxIntraBarrierSyncS)
TLE_ASSERT_BARRIER_FAMILY(flagcxDevBarrierArrive, flagcxDevBarrierWait,
                          flagcxDevBarrierSync)
TLE_ASSERT_BARRIER_FAMILY(tleIntraGridBarrierArriveS, tleIntraGridBarrierWaitS,
                          tleIntraGridBarrierSyncS)
TLE_ASSERT_BARRIER_FAMILY(tleIntraBarrierSessionArrive,
                          tleIntraBarrierSessionWait,
                          tleIntraBarrierSessionSync)
TLE_ASSERT_BARRIER_FAMILY(tleIntraBarrierArriveAt, tleIntraBarrierWaitAt,
                          tleIntraBarrierSyncAt)
TLE_ASSERT_BARRIER_FAMILY(tleDevBarrierArriveAt, tleDevBarrierWaitAt,
                          tleDevBarrierSyncAt)
TLE_ASSERT_BARRIER_FAMILY(tleIntraGridBarrierArriveAt,
                          tleIntraGridBarrierWaitAt, tleIntraGridBarrierSyncAt)
TLE_ASSERT_BARRIER_FAMILY(tleIntraBarrierSessionArriveAt,
                          tleIntraBarrierSessionWaitAt,
                          tleIntraBarrierSessionSyncAt)
#undef TLE_ASSERT_BARRIER_FAMILY

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// The LLVM type of an ABI type: every pointer is a generic `!llvm.ptr`.
static Type llvmType(MLIRContext *ctx, ::tle::abi::Type type) {
  using ::tle::abi::Type;
  switch (type) {
  case Type::Void:
  case Type::NoReturn:
    return LLVM::LLVMVoidType::get(ctx);
  case Type::Bool:
    return IntegerType::get(ctx, 1);
  case Type::I32:
  case Type::U32:
    return IntegerType::get(ctx, 32);
  case Type::I64:
  case Type::U64:
    return IntegerType::get(ctx, 64);
  case Type::Ptr:
  case Type::MutPtr:
  case Type::Tag: // an empty struct by value: a byval pointer
  case Type::CStr:
  case Type::WordPtr:
  case Type::WaitInfoPtr:
    return LLVM::LLVMPointerType::get(ctx);
  }
  llvm_unreachable("unknown ABI type");
}

FailureOr<LLVM::LLVMFuncOp>
mlir::tle::lookupOrDeclareAbiFunction(OpBuilder &builder,
                                      Operation *symbolTable,
                                      const ::tle::abi::Function &fn) {
  MLIRContext *ctx = builder.getContext();
  SmallVector<Type> params;
  for (unsigned i = 0; i < fn.numParams; ++i)
    params.push_back(llvmType(ctx, fn.params[i]));
  return LLVM::lookupOrCreateFn(builder, symbolTable, fn.name, params,
                                llvmType(ctx, fn.result));
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

/// Replaces `op` by a call of the ABI function `fn` on `args`, declaring the
/// callee in the nearest symbol table (`gpu.module` or `builtin.module`).
/// Arguments the ABI takes as pointers are converted to generic pointers.
static LogicalResult replaceWithAbiCall(ConversionPatternRewriter &rewriter,
                                        Operation *op, Fn fn, ValueRange args) {
  const ::tle::abi::Function &entry = ::tle::abi::function(fn);
  Operation *symbolTable = op->getParentWithTrait<OpTrait::SymbolTable>();
  if (!symbolTable)
    return rewriter.notifyMatchFailure(op, "no enclosing symbol table");
  assert(args.size() == entry.numParams && "wrong number of ABI arguments");
  FailureOr<LLVM::LLVMFuncOp> func =
      lookupOrDeclareAbiFunction(rewriter, symbolTable, entry);
  if (failed(func))
    return failure();
  SmallVector<Value> operands;
  for (auto [value, type] : llvm::zip(args, entry.params)) {
    bool isPointer = type == ::tle::abi::Type::Ptr;
    operands.push_back(
        isPointer ? toGenericPointer(rewriter, op->getLoc(), value) : value);
  }
  auto call = LLVM::CallOp::create(rewriter, op->getLoc(), *func, operands);
  rewriter.replaceOp(op, call->getResults());
  return success();
}

static Value createI32(OpBuilder &builder, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(builder, loc, builder.getI32Type(), value);
}

/// The constants the signal functions take for what TLE serves one value
/// of (docs/abi.md): network context 0 (the default of the one-sided ops'
/// optional `context`), 64-bit words.
constexpr int32_t kSignalContext = 0;
constexpr int32_t kSignalBits = 64;

CallSiteText mlir::tle::callSiteOf(Location loc) {
  CallSiteText site;
  loc->walk([&](Location inner) {
    auto flc = dyn_cast<FileLineColLoc>(inner);
    if (!flc)
      return WalkResult::advance();
    site.text = (flc.getFilename().getValue() + ":" + Twine(flc.getLine()) +
                 ":" + Twine(flc.getColumn()))
                    .str();
    site.id = ::tle::abi::siteId(site.text.data(), site.text.size());
    return WalkResult::interrupt();
  });
  return site;
}

/// `args` with the call-site id of `op` appended, when `sites` is on: the
/// trailing parameter of the `...At` twins.
static SmallVector<Value> withSite(OpBuilder &builder, Operation *op,
                                   bool sites, ArrayRef<Value> args) {
  SmallVector<Value> all(args);
  if (sites)
    all.push_back(createI32(builder, op->getLoc(),
                            static_cast<int32_t>(callSiteOf(op->getLoc()).id)));
  return all;
}

/// The network context operand of a signal or one-sided op, or context 0
/// when absent.
static Value contextOrZero(OpBuilder &builder, Location loc, Value context) {
  return context ? context : createI32(builder, loc, kSignalContext);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// The entry points a barrier op lowers to (docs/abi.md): TLE's grid
/// barrier (FlagCX has no grid group: its coopKind 3 is TILE_SPAN), FlagCX's
/// scalar intra barrier, or FlagCX's unified barrier over a team.
enum class BarrierEntry { Grid, Scalar, Unified };

/// Replaces the barrier `op` (half `kind`) with the call of `entry`; the
/// unified form takes `team`, context 0 and system scope.
static LogicalResult lowerBarrier(ConversionPatternRewriter &rewriter,
                                  Operation *op, BarrierEntry entry, Value comm,
                                  Value index, BarrierKind kind,
                                  BarrierGroup group, MemoryOrder memoryOrder,
                                  bool multimemFlag, Team teamKind,
                                  bool sites) {
  Location loc = op->getLoc();
  Value order = createI32(rewriter, loc, static_cast<int>(memoryOrder));
  Value multimem = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(),
                                            multimemFlag ? 1 : 0);
  if (entry == BarrierEntry::Grid)
    return replaceWithAbiCall(
        rewriter, op,
        barrierFunction(sites ? Fn::tleIntraGridBarrierArriveAt
                              : Fn::tleIntraGridBarrierArriveS,
                        kind),
        withSite(rewriter, op, sites, {comm, index, multimem, order}));
  Value coop = createI32(rewriter, loc, static_cast<int>(group));
  if (entry == BarrierEntry::Scalar)
    return replaceWithAbiCall(
        rewriter, op,
        barrierFunction(sites ? Fn::tleIntraBarrierArriveAt
                              : Fn::flagcxIntraBarrierArriveS,
                        kind),
        withSite(rewriter, op, sites, {comm, coop, index, multimem, order}));
  Value team = createI32(rewriter, loc, static_cast<int>(teamKind));
  Value context = createI32(rewriter, loc, 0);
  Value scope = createI32(rewriter, loc, ::tle::kScopeSystem);
  return replaceWithAbiCall(
      rewriter, op,
      barrierFunction(
          sites ? Fn::tleDevBarrierArriveAt : Fn::flagcxDevBarrierArrive, kind),
      withSite(rewriter, op, sites,
               {comm, team, index, context, coop, order, scope}));
}

struct DeviceIntraBarrierOpLowering
    : ConvertOpToLLVMPattern<DeviceIntraBarrierOp> {
  DeviceIntraBarrierOpLowering(const LLVMTypeConverter &converter,
                               BarrierABI abi, bool sites)
      : ConvertOpToLLVMPattern(converter), abi(abi), sites(sites) {}

  LogicalResult
  matchAndRewrite(DeviceIntraBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool isGrid = op.getGroup() == BarrierGroup::grid;
    // FlagCX's unified form has no multimem parameter; dropping the flag
    // silently is what FlagTree did and what TLE must not repeat.
    if (!isGrid && abi == BarrierABI::Unified && op.getMultimem())
      return op.emitOpError(
          "multimem is not expressible in the unified ABI; use abi=scalar");
    BarrierEntry entry = isGrid                      ? BarrierEntry::Grid
                         : abi == BarrierABI::Scalar ? BarrierEntry::Scalar
                                                     : BarrierEntry::Unified;
    return lowerBarrier(rewriter, op, entry, adaptor.getComm(),
                        adaptor.getIndex(), op.getKind(), op.getGroup(),
                        op.getOrder(), op.getMultimem(), Team::intra, sites);
  }

  BarrierABI abi;
  bool sites;
};

/// tle.device_barrier: FlagCX's unified barrier with the op's team, context
/// 0 and system scope, whatever the pass's `abi` option (which chooses the
/// entry points of tle.device_intra_barrier; the scalar form has no team).
/// Two intra cases keep intra's own entry points: the grid barrier (FlagCX
/// has no grid group) and multimem (the unified form has no multimem
/// parameter, and dropping the flag is what TLE must not do); the verifier
/// allows both with team intra only.
struct DeviceBarrierOpLowering : ConvertOpToLLVMPattern<DeviceBarrierOp> {
  DeviceBarrierOpLowering(const LLVMTypeConverter &converter, bool sites)
      : ConvertOpToLLVMPattern(converter), sites(sites) {}

  LogicalResult
  matchAndRewrite(DeviceBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool isGrid = op.getGroup() == BarrierGroup::grid;
    if ((isGrid || op.getMultimem()) && op.getTeam() != Team::intra)
      return rewriter.notifyMatchFailure(op, "grid or multimem off intra");
    BarrierEntry entry = isGrid             ? BarrierEntry::Grid
                         : op.getMultimem() ? BarrierEntry::Scalar
                                            : BarrierEntry::Unified;
    return lowerBarrier(rewriter, op, entry, adaptor.getComm(),
                        adaptor.getIndex(), op.getKind(), op.getGroup(),
                        op.getOrder(), op.getMultimem(), op.getTeam(), sites);
  }

  bool sites;
};

/// tle.session_open: tleIntraBarrierSessionOpen(comm, coop, index).
struct SessionOpenOpLowering : ConvertOpToLLVMPattern<SessionOpenOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(SessionOpenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value coop =
        createI32(rewriter, op.getLoc(), static_cast<int>(op.getGroup()));
    return replaceWithAbiCall(rewriter, op, Fn::tleIntraBarrierSessionOpen,
                              {adaptor.getComm(), coop, adaptor.getIndex()});
  }
};

/// tle.session_barrier: tleIntraBarrierSession{Arrive,Wait,Sync}(comm,
/// coop, index, order, epoch), whose result is the next epoch. TLE's own
/// entry points under either ABI: FlagCX has no session functions.
struct SessionBarrierOpLowering : ConvertOpToLLVMPattern<SessionBarrierOp> {
  SessionBarrierOpLowering(const LLVMTypeConverter &converter, bool sites)
      : ConvertOpToLLVMPattern(converter), sites(sites) {}

  LogicalResult
  matchAndRewrite(SessionBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value coop = createI32(rewriter, loc, static_cast<int>(op.getGroup()));
    Value order = createI32(rewriter, loc, static_cast<int>(op.getOrder()));
    return replaceWithAbiCall(
        rewriter, op,
        barrierFunction(sites ? Fn::tleIntraBarrierSessionArriveAt
                              : Fn::tleIntraBarrierSessionArrive,
                        op.getKind()),
        withSite(rewriter, op, sites,
                 {adaptor.getComm(), coop, adaptor.getIndex(), order,
                  adaptor.getEpoch()}));
  }

  bool sites;
};

/// tle.session_close: tleIntraBarrierSessionClose(comm, coop, index, epoch).
struct SessionCloseOpLowering : ConvertOpToLLVMPattern<SessionCloseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(SessionCloseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value coop =
        createI32(rewriter, op.getLoc(), static_cast<int>(op.getGroup()));
    return replaceWithAbiCall(
        rewriter, op, Fn::tleIntraBarrierSessionClose,
        {adaptor.getComm(), coop, adaptor.getIndex(), adaptor.getEpoch()});
  }
};

/// tle.team_rank and tle.team_size: FlagCX's query for intra and world
/// (flagcxDevCommGet{IntraRank,Rank}, ...), TLE's team query for inter,
/// which FlagCX lacks.
template <typename OpT> struct TeamQueryLowering : ConvertOpToLLVMPattern<OpT> {
  TeamQueryLowering(const LLVMTypeConverter &converter, Fn intra, Fn world,
                    Fn anyTeam)
      : ConvertOpToLLVMPattern<OpT>(converter), intra(intra), world(world),
        anyTeam(anyTeam) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    switch (op.getTeam()) {
    case Team::intra:
      return replaceWithAbiCall(rewriter, op, intra, {adaptor.getComm()});
    case Team::world:
      return replaceWithAbiCall(rewriter, op, world, {adaptor.getComm()});
    case Team::inter:
      break;
    }
    Value team =
        createI32(rewriter, op.getLoc(), static_cast<int>(op.getTeam()));
    return replaceWithAbiCall(rewriter, op, anyTeam, {adaptor.getComm(), team});
  }

  Fn intra, world, anyTeam;
};

/// tle.signal: flagcxDevSignalInc or flagcxDevSignalAdd with the op's
/// team and context (0 when absent), system scope.
struct SignalOpLowering : ConvertOpToLLVMPattern<SignalOp> {
  SignalOpLowering(const LLVMTypeConverter &converter, bool sites)
      : ConvertOpToLLVMPattern(converter), sites(sites) {}

  LogicalResult
  matchAndRewrite(SignalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value team = createI32(rewriter, loc, static_cast<int>(op.getTeam()));
    Value context = contextOrZero(rewriter, loc, adaptor.getContextId());
    Value coop = createI32(rewriter, loc, static_cast<int>(op.getGroup()));
    Value scope = createI32(rewriter, loc, ::tle::kScopeSystem);
    Value comm = adaptor.getComm(), peer = adaptor.getPeer();
    Value sig = adaptor.getSig();
    if (op.getKind() == SignalKind::inc)
      return replaceWithAbiCall(
          rewriter, op, sites ? Fn::tleDevSignalIncAt : Fn::flagcxDevSignalInc,
          withSite(rewriter, op, sites,
                   {comm, team, peer, sig, context, coop, scope}));
    return replaceWithAbiCall(
        rewriter, op, sites ? Fn::tleDevSignalAddAt : Fn::flagcxDevSignalAdd,
        withSite(
            rewriter, op, sites,
            {comm, team, peer, sig, adaptor.getValue(), context, coop, scope}));
  }

  bool sites;
};

/// The 64-bit word a signal or counter op names: its counter index, or
/// its signal index.
template <typename AdaptorT> static Value wordOf(AdaptorT adaptor) {
  if constexpr (requires { adaptor.getCounter(); })
    return adaptor.getCounter();
  else
    return adaptor.getSig();
}

/// tle.signal_wait and tle.counter_wait: `fn` (flagcxDevWaitSignal,
/// flagcxDevWaitCounter, which FlagCX gives one signature) on 64 bits, with
/// the op's context (0 when absent).
template <typename OpT> struct WordWaitLowering : ConvertOpToLLVMPattern<OpT> {
  /// `siteFn`: `fn`'s `...At` twin, called instead when set.
  WordWaitLowering(const LLVMTypeConverter &converter, Fn fn,
                   std::optional<Fn> siteFn = std::nullopt)
      : ConvertOpToLLVMPattern<OpT>(converter), fn(fn), siteFn(siteFn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return replaceWithAbiCall(
        rewriter, op, siteFn ? *siteFn : fn,
        withSite(rewriter, op, siteFn.has_value(),
                 {adaptor.getComm(), wordOf(adaptor), adaptor.getLeast(),
                  createI32(rewriter, loc, kSignalBits),
                  contextOrZero(rewriter, loc, adaptor.getContextId()),
                  createI32(rewriter, loc, static_cast<int>(op.getGroup())),
                  createI32(rewriter, loc, static_cast<int>(op.getOrder()))}));
  }

  Fn fn;
  std::optional<Fn> siteFn;
};

/// tle.read_signal and tle.read_counter: `fn` (flagcxDevReadSignal,
/// flagcxDevReadCounter) on 64 bits, with the op's context (0 when absent).
template <typename OpT> struct WordReadLowering : ConvertOpToLLVMPattern<OpT> {
  WordReadLowering(const LLVMTypeConverter &converter, Fn fn)
      : ConvertOpToLLVMPattern<OpT>(converter), fn(fn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return replaceWithAbiCall(
        rewriter, op, fn,
        {adaptor.getComm(), wordOf(adaptor),
         createI32(rewriter, loc, kSignalBits),
         contextOrZero(rewriter, loc, adaptor.getContextId()),
         createI32(rewriter, loc, static_cast<int>(op.getOrder()))});
  }

  Fn fn;
};

/// tle.reset_signal and tle.reset_counter: `fn` (flagcxDevResetSignal,
/// flagcxDevResetCounter) with the op's context (0 when absent), which
/// FlagCX puts before the index.
template <typename OpT> struct WordResetLowering : ConvertOpToLLVMPattern<OpT> {
  WordResetLowering(const LLVMTypeConverter &converter, Fn fn)
      : ConvertOpToLLVMPattern<OpT>(converter), fn(fn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return replaceWithAbiCall(
        rewriter, op, fn,
        {adaptor.getComm(),
         contextOrZero(rewriter, op.getLoc(), adaptor.getContextId()),
         wordOf(adaptor)});
  }

  Fn fn;
};

/// The put entry point for a signal kind (or none) and a local counter (or
/// none): FlagCX's six flagcxDevPut* combinations.
static Fn putFunction(std::optional<SignalKind> signal, bool counter) {
  if (!signal)
    return counter ? Fn::flagcxDevPut_LCtrInc : Fn::flagcxDevPut;
  if (*signal == SignalKind::inc)
    return counter ? Fn::flagcxDevPut_RSigInc_LCtrInc
                   : Fn::flagcxDevPut_RSigInc;
  return counter ? Fn::flagcxDevPut_RSigAdd_LCtrInc : Fn::flagcxDevPut_RSigAdd;
}

/// tle.put: flagcxDevPut or one of its signal/counter variants, system
/// scope; the attached signal's word (and value) and the counter follow
/// FlagCX's fixed parameters in that order.
struct PutOpLowering : ConvertOpToLLVMPattern<PutOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(PutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> args{
        adaptor.getComm(),
        adaptor.getDst(),
        adaptor.getDstOffset(),
        adaptor.getSrc(),
        adaptor.getSrcOffset(),
        adaptor.getBytes(),
        createI32(rewriter, loc, static_cast<int>(op.getTeam())),
        adaptor.getPeer(),
        contextOrZero(rewriter, loc, adaptor.getContextId()),
        createI32(rewriter, loc, static_cast<int>(op.getGroup())),
        createI32(rewriter, loc, ::tle::kScopeSystem),
        createI32(rewriter, loc, static_cast<int>(op.getOrder()))};
    if (Value signal = adaptor.getSignal())
      args.push_back(signal);
    if (Value value = adaptor.getSignalValue())
      args.push_back(value);
    if (Value counter = adaptor.getCounter())
      args.push_back(counter);
    return replaceWithAbiCall(
        rewriter, op,
        putFunction(op.getSignalKind(), static_cast<bool>(op.getCounter())),
        args);
  }
};

/// tle.get: flagcxDevGet, system scope.
struct GetOpLowering : ConvertOpToLLVMPattern<GetOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(GetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return replaceWithAbiCall(
        rewriter, op, Fn::flagcxDevGet,
        {adaptor.getComm(), adaptor.getSrc(), adaptor.getSrcOffset(),
         adaptor.getDst(), adaptor.getDstOffset(), adaptor.getBytes(),
         createI32(rewriter, loc, static_cast<int>(op.getTeam())),
         adaptor.getPeer(),
         contextOrZero(rewriter, loc, adaptor.getContextId()),
         createI32(rewriter, loc, static_cast<int>(op.getGroup())),
         createI32(rewriter, loc, ::tle::kScopeSystem),
         createI32(rewriter, loc, static_cast<int>(op.getOrder()))});
  }
};

/// tle.put_value: flagcxDevPutValue or its _RSigInc / _RSigAdd variant,
/// system scope.
struct PutValueOpLowering : ConvertOpToLLVMPattern<PutValueOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(PutValueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> args{
        adaptor.getComm(),
        adaptor.getDst(),
        adaptor.getDstOffset(),
        adaptor.getValue(),
        createI32(rewriter, loc, static_cast<int>(op.getTeam())),
        adaptor.getPeer(),
        contextOrZero(rewriter, loc, adaptor.getContextId()),
        createI32(rewriter, loc, static_cast<int>(op.getGroup())),
        createI32(rewriter, loc, ::tle::kScopeSystem),
        createI32(rewriter, loc, static_cast<int>(op.getOrder()))};
    Fn fn = Fn::flagcxDevPutValue;
    if (std::optional<SignalKind> kind = op.getSignalKind()) {
      fn = *kind == SignalKind::inc ? Fn::flagcxDevPutValue_RSigInc
                                    : Fn::flagcxDevPutValue_RSigAdd;
      args.push_back(adaptor.getSignal());
      if (Value value = adaptor.getSignalValue())
        args.push_back(value);
    }
    return replaceWithAbiCall(rewriter, op, fn, args);
  }
};

/// tle.flush: flagcxDevFlush.
struct FlushOpLowering : ConvertOpToLLVMPattern<FlushOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(FlushOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return replaceWithAbiCall(
        rewriter, op, Fn::flagcxDevFlush,
        {adaptor.getComm(),
         contextOrZero(rewriter, loc, adaptor.getContextId()),
         createI32(rewriter, loc, static_cast<int>(op.getGroup())),
         createI32(rewriter, loc, static_cast<int>(op.getOrder()))});
  }
};

/// tle.shadow_increase: flagcxDevIncreaseSignalShadow.
struct ShadowIncreaseOpLowering : ConvertOpToLLVMPattern<ShadowIncreaseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(ShadowIncreaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return replaceWithAbiCall(
        rewriter, op, Fn::flagcxDevIncreaseSignalShadow,
        {adaptor.getComm(),
         contextOrZero(rewriter, op.getLoc(), adaptor.getContextId()),
         adaptor.getSig(), adaptor.getDelta()});
  }
};

/// tle.shadow_wait: flagcxDevWaitSignalMeetShadow on 64 bits.
struct ShadowWaitOpLowering : ConvertOpToLLVMPattern<ShadowWaitOp> {
  ShadowWaitOpLowering(const LLVMTypeConverter &converter, bool sites)
      : ConvertOpToLLVMPattern(converter), sites(sites) {}

  LogicalResult
  matchAndRewrite(ShadowWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return replaceWithAbiCall(
        rewriter, op,
        sites ? Fn::tleDevWaitSignalMeetShadowAt
              : Fn::flagcxDevWaitSignalMeetShadow,
        withSite(rewriter, op, sites,
                 {adaptor.getComm(),
                  contextOrZero(rewriter, loc, adaptor.getContextId()),
                  adaptor.getSig(), createI32(rewriter, loc, kSignalBits),
                  createI32(rewriter, loc, static_cast<int>(op.getGroup())),
                  createI32(rewriter, loc, static_cast<int>(op.getOrder()))}));
  }

  bool sites;
};

/// An op whose operands are, in order, the arguments of one ABI function and
/// whose result is its result: the rank and size queries and the pointers.
template <typename OpT>
struct RuntimeCallLowering : ConvertOpToLLVMPattern<OpT> {
  RuntimeCallLowering(const LLVMTypeConverter &converter, Fn fn)
      : ConvertOpToLLVMPattern<OpT>(converter), fn(fn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return replaceWithAbiCall(rewriter, op, fn, adaptor.getOperands());
  }

  Fn fn;
};

} // namespace

void mlir::tle::populateTLEToLLVMConversionPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns,
    BarrierABI abi, bool sites) {
  patterns.add<DeviceIntraBarrierOpLowering>(converter, abi, sites);
  patterns.add<DeviceBarrierOpLowering>(converter, sites);
  patterns.add<TeamQueryLowering<TeamRankOp>>(
      converter, Fn::flagcxDevCommGetIntraRank, Fn::flagcxDevCommGetRank,
      Fn::tleDevCommGetTeamRank);
  patterns.add<TeamQueryLowering<TeamSizeOp>>(
      converter, Fn::flagcxDevCommGetIntraSize, Fn::flagcxDevCommGetSize,
      Fn::tleDevCommGetTeamSize);
  patterns.add<RuntimeCallLowering<IntraRankOp>>(converter,
                                                 Fn::flagcxDevCommGetIntraRank);
  patterns.add<RuntimeCallLowering<IntraSizeOp>>(converter,
                                                 Fn::flagcxDevCommGetIntraSize);
  patterns.add<RuntimeCallLowering<LocalPointerOp>>(converter,
                                                    Fn::flagcxGetLocalPointerS);
  patterns.add<RuntimeCallLowering<IntraPointerOp>>(converter,
                                                    Fn::flagcxGetIntraPointerS);
  patterns.add<SignalOpLowering>(converter, sites);
  patterns.add<WordWaitLowering<SignalWaitOp>>(
      converter, Fn::flagcxDevWaitSignal,
      sites ? std::optional<Fn>(Fn::tleDevWaitSignalAt) : std::nullopt);
  patterns.add<WordReadLowering<ReadSignalOp>>(converter,
                                               Fn::flagcxDevReadSignal);
  patterns.add<WordResetLowering<ResetSignalOp>>(converter,
                                                 Fn::flagcxDevResetSignal);
  patterns.add<PutOpLowering, GetOpLowering, PutValueOpLowering,
               FlushOpLowering, ShadowIncreaseOpLowering>(converter);
  patterns.add<ShadowWaitOpLowering>(converter, sites);
  patterns.add<WordWaitLowering<CounterWaitOp>>(
      converter, Fn::flagcxDevWaitCounter,
      sites ? std::optional<Fn>(Fn::tleDevWaitCounterAt) : std::nullopt);
  patterns.add<WordReadLowering<ReadCounterOp>>(converter,
                                                Fn::flagcxDevReadCounter);
  patterns.add<WordResetLowering<ResetCounterOp>>(converter,
                                                  Fn::flagcxDevResetCounter);
  patterns.add<SessionOpenOpLowering, SessionCloseOpLowering>(converter);
  patterns.add<SessionBarrierOpLowering>(converter, sites);
}

//===----------------------------------------------------------------------===//
// convert-to-llvm
//===----------------------------------------------------------------------===//

// The dialect's interface (TLEDialect.cpp) calls these patterns, with the
// scalar ABI, the default of convert-tle-to-llvm.
static void scalarPatterns(const LLVMTypeConverter &converter,
                           RewritePatternSet &patterns) {
  populateTLEToLLVMConversionPatterns(converter, patterns, BarrierABI::Scalar);
}

void mlir::tle::registerConvertTLEToLLVMInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, TLEDialect *dialect) {
    dialect->toLLVMPatterns = scalarPatterns;
  });
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
    populateTLEToLLVMConversionPatterns(converter, patterns, abi, sites);

    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<TLEDialect>();
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::tle
