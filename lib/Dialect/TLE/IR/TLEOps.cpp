//===- TLEOps.cpp - Operations of the tle dialect -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Verifiers of the `tle` ops. Each rule is documented in the op's description
// in TLEOps.td; the checks on constants only see operands whose defining op
// folds to a constant (arith.constant, llvm.mlir.constant, llvm.mlir.zero),
// runtime values are checked by the device library.
//
//===----------------------------------------------------------------------===//

#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tle;

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

/// The rules every barrier op shares (TLEOps.td, device_intra_barrier).
static LogicalResult verifyBarrier(Operation *op, BarrierKind kind, Value comm,
                                   Value index, BarrierGroup group,
                                   MemoryOrder order, bool multimem) {
  if (isNegativeConstant(index))
    return op->emitOpError("index must be non-negative");
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (multimem && group == BarrierGroup::thread)
    return op->emitOpError("multimem is meaningless with group thread");
  // An arrive only publishes and a wait only observes: an order that has
  // only the other half would silently degrade to relaxed.
  if (kind == BarrierKind::arrive && order == MemoryOrder::acquire)
    return op->emitOpError("arrive cannot acquire; use order relaxed, release "
                           "or acq_rel");
  if (kind == BarrierKind::wait && order == MemoryOrder::release)
    return op->emitOpError("wait cannot release; use order relaxed, acquire or "
                           "acq_rel");
  return success();
}

LogicalResult DeviceIntraBarrierOp::verify() {
  return verifyBarrier(*this, getKind(), getComm(), getIndex(), getGroup(),
                       getOrder(), getMultimem());
}

LogicalResult DeviceBarrierOp::verify() {
  if (failed(verifyBarrier(*this, getKind(), getComm(), getIndex(), getGroup(),
                           getOrder(), getMultimem())))
    return failure();
  // The grid barrier needs every CTA of the launch co-resident, which one
  // node's launch gives; its entry points (tleIntraGridBarrier*) are intra's.
  if (getGroup() == BarrierGroup::grid && getTeam() != Team::intra)
    return emitOpError("group grid is only available with team intra; use "
                       "group block (or warp) for team ")
           << stringifyTeam(getTeam());
  // NVLink multicast objects span the GPUs of one node.
  if (getMultimem() && getTeam() != Team::intra)
    return emitOpError("multimem is only available with team intra");
  return success();
}

/// The rules of the session ops (TLEOps.td, session_open): a barrier's on
/// the slot, and no grid group.
static LogicalResult verifySession(Operation *op, Value comm, Value index,
                                   BarrierGroup group) {
  if (isNegativeConstant(index))
    return op->emitOpError("index must be non-negative");
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (group == BarrierGroup::grid)
    return op->emitOpError("sessions serve groups thread, warp and block; "
                           "the grid barrier keeps its own state");
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
static LogicalResult verifyNotACommunicator(Operation *op, Value mem) {
  for (OpOperand &use : mem.getUses()) {
    Operation *user = use.getOwner();
    // Every tle op but the pointer ops takes its communicator first.
    if (user == op || use.getOperandNumber() != 0 ||
        !isa<TLEDialect>(user->getDialect()) ||
        isa<LocalPointerOp, IntraPointerOp>(user))
      continue;
    InFlightDiagnostic diag =
        op->emitOpError()
        << "mem is also the communicator of '" << user->getName()
        << "': mem takes a symmetric buffer's handle (tleMemGetHandle), "
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

/// A wait or a read only observes: the release half of an order would be
/// silently dropped.
static LogicalResult verifyObserver(Operation *op, Value comm, Value sig,
                                    MemoryOrder order, Value context = {}) {
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (isNegativeConstant(sig))
    return op->emitOpError("signal index must be non-negative");
  if (context && isNegativeConstant(context))
    return op->emitOpError("context must be non-negative");
  if (order == MemoryOrder::release)
    return op->emitOpError("cannot release; use order relaxed, acquire, "
                           "acq_rel or seq_cst");
  return success();
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

/// A put only publishes: the acquire half of an order would be dropped.
static LogicalResult verifyPublisherOrder(Operation *op, MemoryOrder order) {
  // FlagCX's put fences for release and acq_rel only: seq_cst would be
  // weakened to relaxed as silently as acquire.
  if (order == MemoryOrder::acquire || order == MemoryOrder::seq_cst)
    return op->emitOpError("cannot acquire: a put only publishes; use order "
                           "relaxed, release or acq_rel");
  return success();
}

LogicalResult PutOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNullHandle(getDst()) || isNullHandle(getSrc()))
    return emitOpError("a buffer handle is a null pointer");
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
  if (failed(verifyNonNegative(*this, {{getSrcOffset(), "src offset"},
                                       {getDstOffset(), "dst offset"},
                                       {getBytes(), "bytes"},
                                       {getPeer(), "peer"},
                                       {getContextId(), "context"}})))
    return failure();
  // FlagCX's get fences for acquire and acq_rel only.
  if (getOrder() == MemoryOrder::release || getOrder() == MemoryOrder::seq_cst)
    return emitOpError("cannot release: a get only observes; use order "
                       "relaxed, acquire or acq_rel");
  return success();
}

LogicalResult PutValueOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNullHandle(getDst()))
    return emitOpError("a buffer handle is a null pointer");
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
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (failed(verifyNonNegative(*this, {{getCounter(), "counter index"},
                                       {getContextId(), "context"}})))
    return failure();
  if (getOrder() == MemoryOrder::release)
    return emitOpError("cannot release; use order relaxed, acquire, acq_rel "
                       "or seq_cst");
  return success();
}

LogicalResult ReadCounterOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (failed(verifyNonNegative(*this, {{getCounter(), "counter index"},
                                       {getContextId(), "context"}})))
    return failure();
  if (getOrder() == MemoryOrder::release)
    return emitOpError("cannot release; use order relaxed, acquire, acq_rel "
                       "or seq_cst");
  return success();
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
