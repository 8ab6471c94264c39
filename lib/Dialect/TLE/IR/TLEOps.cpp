//===- TLEOps.cpp - Operations of the tle dialect -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Verifiers of the `tle` ops. Each rule is documented in the op's description
// in TLEOps.td; which orders, groups and teams go together is the device
// ABI's rule table (tle/rules.def, read through tle/rules.h), which the
// Triton front ends check too. The checks on constants only see operands
// whose defining op folds to a constant (arith.constant, llvm.mlir.constant,
// llvm.mlir.zero), runtime values are checked by the device library.
//
//===----------------------------------------------------------------------===//

#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "tle/rules.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tle;
// The device ABI's rule table (the runtime's namespace tle, not mlir::tle).
namespace rules = ::tle::rules;

/// Returns true if `value` is a known constant below zero.
static bool isNegativeConstant(Value value) {
  APInt constant;
  return matchPattern(value, m_ConstantInt(&constant)) && constant.isNegative();
}

/// Returns true if the communicator or buffer handle `handle` is a known null
/// pointer or address 0: such a call can only fault on the device.
static bool isNullHandle(Value handle) {
  if (isa<IntegerType>(handle.getType()))
    return matchPattern(handle, m_Zero());
  return isa_and_nonnull<LLVM::ZeroOp>(handle.getDefiningOp());
}

/// `names` as prose: "a", "a or b", "a, b or c" (`last` joins the last two).
static std::string joinNames(ArrayRef<StringRef> names, StringRef last) {
  std::string text;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i)
      text += i + 1 == names.size() ? (" " + last + " ").str() : ", ";
    text += name;
  }
  return text;
}

/// The orders rules.def lets `use` take, for a diagnostic.
static std::string acceptedOrders(rules::OrderUse use) {
  SmallVector<StringRef> names;
  for (int order = ::tle::kOrderRelaxed; order <= ::tle::kOrderSeqCst; ++order)
    if (rules::acceptsOrder(use, order))
      names.push_back(stringifyMemoryOrder(static_cast<MemoryOrder>(order)));
  return joinNames(names, "or");
}

/// Fails with "`refusal`; use order ..." where rules.def's `use` refuses
/// `order`: an order whose only half the operation does not perform would
/// silently degrade to relaxed.
static LogicalResult verifyOrder(Operation *op, rules::OrderUse use,
                                 MemoryOrder order, const Twine &refusal) {
  if (rules::acceptsOrder(use, static_cast<int>(order)))
    return success();
  return op->emitOpError() << refusal << "; use order " << acceptedOrders(use);
}

/// Whether rules.def serves `use` with `group` on `team`.
static bool serves(rules::GroupUse use, BarrierGroup group, Team team) {
  return rules::servesGroup(use, static_cast<int>(group),
                            static_cast<int>(team));
}

/// The teams on which rules.def serves `use` with `group`, for a diagnostic.
static std::string servingTeams(rules::GroupUse use, BarrierGroup group) {
  SmallVector<StringRef> names;
  for (int team = ::tle::kTeamIntra; team <= ::tle::kTeamWorld; ++team)
    if (serves(use, group, static_cast<Team>(team)))
      names.push_back(stringifyTeam(static_cast<Team>(team)));
  return joinNames(names, "or");
}

/// The rules every barrier op shares (TLEOps.td, device_intra_barrier), on
/// team `team` (intra for device_intra_barrier and the sessions).
static LogicalResult verifyBarrier(Operation *op, BarrierKind kind, Value comm,
                                   Value index, BarrierGroup group,
                                   MemoryOrder order, bool multimem,
                                   Team team = Team::intra) {
  if (isNegativeConstant(index))
    return op->emitOpError("index must be non-negative");
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (multimem && !rules::servesGroupOnSomeTeam(rules::GroupUse::Multimem,
                                                static_cast<int>(group)))
    return op->emitOpError("multimem is meaningless with group ")
           << stringifyBarrierGroup(group);
  if (failed(verifyOrder(op, rules::barrierOrderUse(static_cast<int>(kind)),
                         order,
                         stringifyBarrierKind(kind) +
                             (rules::orderAcquires(static_cast<int>(order))
                                  ? " cannot acquire"
                                  : " cannot release"))))
    return failure();
  if (!serves(rules::GroupUse::Barrier, group, team))
    return op->emitOpError("group ")
           << stringifyBarrierGroup(group) << " is only available with team "
           << servingTeams(rules::GroupUse::Barrier, group)
           << "; use group block (or warp) for team " << stringifyTeam(team);
  if (multimem && !serves(rules::GroupUse::Multimem, group, team))
    return op->emitOpError("multimem is only available with team ")
           << servingTeams(rules::GroupUse::Multimem, group);
  return success();
}

LogicalResult DeviceIntraBarrierOp::verify() {
  return verifyBarrier(*this, getKind(), getComm(), getIndex(), getGroup(),
                       getOrder(), getMultimem());
}

LogicalResult DeviceBarrierOp::verify() {
  return verifyBarrier(*this, getKind(), getComm(), getIndex(), getGroup(),
                       getOrder(), getMultimem(), getTeam());
}

/// The rules of the session ops (TLEOps.td, session_open): a barrier's on
/// the slot, and the groups rules.def's Session serves (no grid).
static LogicalResult verifySession(Operation *op, Value comm, Value index,
                                   BarrierGroup group) {
  if (isNegativeConstant(index))
    return op->emitOpError("index must be non-negative");
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (!serves(rules::GroupUse::Session, group, Team::intra)) {
    SmallVector<StringRef> groups;
    for (BarrierGroup served : {BarrierGroup::thread, BarrierGroup::warp,
                                BarrierGroup::block, BarrierGroup::grid})
      if (serves(rules::GroupUse::Session, served, Team::intra))
        groups.push_back(stringifyBarrierGroup(served));
    return op->emitOpError("sessions serve groups ")
           << joinNames(groups, "and") << "; the "
           << stringifyBarrierGroup(group) << " barrier keeps its own state";
  }
  return success();
}

LogicalResult SessionOpenOp::verify() {
  return verifySession(*this, getComm(), getIndex(), getGroup());
}

LogicalResult SessionBarrierOp::verify() {
  if (failed(verifyBarrier(*this, getKind(), getComm(), getIndex(), getGroup(),
                           getOrder(), /*multimem=*/false)))
    return failure();
  return verifySession(*this, getComm(), getIndex(), getGroup());
}

LogicalResult SessionCloseOp::verify() {
  return verifySession(*this, getComm(), getIndex(), getGroup());
}

LogicalResult IntraRankOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return success();
}

LogicalResult IntraSizeOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return success();
}

LogicalResult TeamRankOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return success();
}

LogicalResult TeamSizeOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return success();
}

/// A buffer handle and a communicator are both `!llvm.ptr` (or i64), so the
/// types cannot tell one passed for the other; a value that another tle op
/// uses as its communicator is one, and passing it as `mem` is the mistake
/// (only the runtime would catch it, on the device).
/// `what` names the operand (mem, dst, src); the op's own communicator
/// counts too (a transfer given its communicator as a buffer).
static LogicalResult verifyNotACommunicator(Operation *op, Value mem,
                                            StringRef what = "mem") {
  for (OpOperand &use : mem.getUses()) {
    Operation *user = use.getOwner();
    // Every tle op but the pointer ops takes its communicator first.
    if (use.getOperandNumber() != 0 || !isa<TLEDialect>(user->getDialect()) ||
        isa<LocalPointerOp, IntraPointerOp>(user))
      continue;
    InFlightDiagnostic diag =
        op->emitOpError()
        << what << " is also the communicator of '" << user->getName() << "'"
        << (user == op ? " itself" : "") << ": " << what
        << " takes a symmetric buffer's handle (tleMemGetHandle), "
           "not a communicator (tleCommGetDevComm)";
    diag.attachNote(user->getLoc()) << "used as the communicator here";
    return diag;
  }
  return success();
}

LogicalResult LocalPointerOp::verify() {
  if (isNullHandle(getMem()))
    return emitOpError("mem is a null pointer");
  if (failed(verifyNotACommunicator(*this, getMem())))
    return failure();
  if (isNegativeConstant(getOffset()))
    return emitOpError("offset must be non-negative");
  return success();
}

LogicalResult IntraPointerOp::verify() {
  if (isNullHandle(getMem()))
    return emitOpError("mem is a null pointer");
  if (failed(verifyNotACommunicator(*this, getMem())))
    return failure();
  if (isNegativeConstant(getOffset()))
    return emitOpError("offset must be non-negative");
  if (isNegativeConstant(getPeer()))
    return emitOpError("peer must be non-negative");
  return success();
}

LogicalResult SignalOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNegativeConstant(getPeer()))
    return emitOpError("peer must be non-negative");
  if (isNegativeConstant(getSig()))
    return emitOpError("signal index must be non-negative");
  if (getKind() == SignalKind::inc && getValue())
    return emitOpError("inc adds 1 and takes no value; use add");
  if (getKind() == SignalKind::add && !getValue())
    return emitOpError("add needs a value: tle.signal add %comm, %peer, "
                       "%sig, %value");
  // A word only grows: a negative i64 would be a huge unsigned addend that
  // wraps it backwards.
  if (getValue() && isNegativeConstant(getValue()))
    return emitOpError("value must be non-negative: a signal only adds");
  if (getContextId() && isNegativeConstant(getContextId()))
    return emitOpError("context must be non-negative");
  return success();
}

/// A wait or a read of word `word` (a signal's or, with `wordName`
/// "counter index", a counter's) only observes: rules.def's Observe.
static LogicalResult verifyObserver(Operation *op, Value comm, Value word,
                                    MemoryOrder order, Value context,
                                    StringRef wordName = "signal index") {
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (isNegativeConstant(word))
    return op->emitOpError() << wordName << " must be non-negative";
  if (context && isNegativeConstant(context))
    return op->emitOpError("context must be non-negative");
  return verifyOrder(op, rules::OrderUse::Observe, order, "cannot release");
}

LogicalResult SignalWaitOp::verify() {
  return verifyObserver(*this, getComm(), getSig(), getOrder(), getContextId());
}

LogicalResult ReadSignalOp::verify() {
  return verifyObserver(*this, getComm(), getSig(), getOrder(), getContextId());
}

LogicalResult ResetSignalOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNegativeConstant(getSig()))
    return emitOpError("signal index must be non-negative");
  if (getContextId() && isNegativeConstant(getContextId()))
    return emitOpError("context must be non-negative");
  return success();
}

//===----------------------------------------------------------------------===//
// One-sided data movement
//===----------------------------------------------------------------------===//

/// Fails on the first of `values` (named by `names`) that is a known
/// negative constant; absent optional operands are null and skipped.
static LogicalResult
verifyNonNegative(Operation *op,
                  ArrayRef<std::pair<Value, const char *>> values) {
  for (auto [value, name] : values)
    if (value && isNegativeConstant(value))
      return op->emitOpError() << name << " must be non-negative";
  return success();
}

/// The rules of a signal attached to a put: a kind goes with a word, inc
/// takes no value, add needs one.
static LogicalResult verifyAttachedSignal(Operation *op,
                                          std::optional<SignalKind> kind,
                                          Value signal, Value value) {
  if (kind.has_value() != static_cast<bool>(signal))
    return op->emitOpError("a signal kind needs its word and the reverse: "
                           "`signal inc %sig` or `signal add %sig, %value`");
  if (!kind && value)
    return op->emitOpError("a signal value needs `signal add %sig, %value`");
  if (kind == SignalKind::inc && value)
    return op->emitOpError("signal inc adds 1 and takes no value; use "
                           "signal add");
  if (kind == SignalKind::add && !value)
    return op->emitOpError("signal add needs a value: signal add %sig, "
                           "%value");
  return success();
}

/// A put only publishes: rules.def's Publish (FlagCX's put fences for
/// release and acq_rel only, so seq_cst is refused with acquire).
static LogicalResult verifyPublisherOrder(Operation *op, MemoryOrder order) {
  return verifyOrder(op, rules::OrderUse::Publish, order,
                     "cannot acquire: a put only publishes");
}

LogicalResult PutOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNullHandle(getDst()) || isNullHandle(getSrc()))
    return emitOpError("a buffer handle is a null pointer");
  if (failed(verifyNotACommunicator(*this, getDst(), "dst")) ||
      failed(verifyNotACommunicator(*this, getSrc(), "src")))
    return failure();
  if (failed(verifyNonNegative(*this, {{getDstOffset(), "dst offset"},
                                       {getSrcOffset(), "src offset"},
                                       {getBytes(), "bytes"},
                                       {getPeer(), "peer"},
                                       {getSignal(), "signal index"},
                                       {getSignalValue(), "signal value"},
                                       {getCounter(), "counter index"},
                                       {getContextId(), "context"}})))
    return failure();
  if (failed(verifyAttachedSignal(*this, getSignalKind(), getSignal(),
                                  getSignalValue())))
    return failure();
  return verifyPublisherOrder(*this, getOrder());
}

LogicalResult GetOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNullHandle(getDst()) || isNullHandle(getSrc()))
    return emitOpError("a buffer handle is a null pointer");
  if (failed(verifyNotACommunicator(*this, getDst(), "dst")) ||
      failed(verifyNotACommunicator(*this, getSrc(), "src")))
    return failure();
  if (failed(verifyNonNegative(*this, {{getSrcOffset(), "src offset"},
                                       {getDstOffset(), "dst offset"},
                                       {getBytes(), "bytes"},
                                       {getPeer(), "peer"},
                                       {getContextId(), "context"}})))
    return failure();
  // rules.def's Fetch: FlagCX's get fences for acquire and acq_rel only.
  return verifyOrder(*this, rules::OrderUse::Fetch, getOrder(),
                     "cannot release: a get only observes");
}

LogicalResult PutValueOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNullHandle(getDst()))
    return emitOpError("a buffer handle is a null pointer");
  if (failed(verifyNotACommunicator(*this, getDst(), "dst")))
    return failure();
  if (failed(verifyNonNegative(*this, {{getDstOffset(), "dst offset"},
                                       {getPeer(), "peer"},
                                       {getSignal(), "signal index"},
                                       {getSignalValue(), "signal value"},
                                       {getContextId(), "context"}})))
    return failure();
  if (failed(verifyAttachedSignal(*this, getSignalKind(), getSignal(),
                                  getSignalValue())))
    return failure();
  return verifyPublisherOrder(*this, getOrder());
}

LogicalResult FlushOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return verifyNonNegative(*this, {{getContextId(), "context"}});
}

LogicalResult CounterWaitOp::verify() {
  return verifyObserver(*this, getComm(), getCounter(), getOrder(),
                        getContextId(), "counter index");
}

LogicalResult ReadCounterOp::verify() {
  return verifyObserver(*this, getComm(), getCounter(), getOrder(),
                        getContextId(), "counter index");
}

LogicalResult ResetCounterOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return verifyNonNegative(
      *this, {{getCounter(), "counter index"}, {getContextId(), "context"}});
}

LogicalResult ShadowIncreaseOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  return verifyNonNegative(*this, {{getSig(), "signal index"},
                                   {getDelta(), "delta"},
                                   {getContextId(), "context"}});
}

LogicalResult ShadowWaitOp::verify() {
  return verifyObserver(*this, getComm(), getSig(), getOrder(), getContextId());
}

#define GET_OP_CLASSES
#include "tle/Dialect/TLE/IR/TLEOps.cpp.inc"
