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

LogicalResult LocalPointerOp::verify() {
  if (isNullHandle(getMem()))
    return emitOpError("mem is a null pointer");
  if (isNegativeConstant(getOffset()))
    return emitOpError("offset must be non-negative");
  return success();
}

LogicalResult IntraPointerOp::verify() {
  if (isNullHandle(getMem()))
    return emitOpError("mem is a null pointer");
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
  return success();
}

/// A wait or a read only observes: the release half of an order would be
/// silently dropped.
static LogicalResult verifyObserver(Operation *op, Value comm, Value sig,
                                    MemoryOrder order) {
  if (isNullHandle(comm))
    return op->emitOpError("comm is a null pointer");
  if (isNegativeConstant(sig))
    return op->emitOpError("signal index must be non-negative");
  if (order == MemoryOrder::release)
    return op->emitOpError("cannot release; use order relaxed, acquire, "
                           "acq_rel or seq_cst");
  return success();
}

LogicalResult SignalWaitOp::verify() {
  return verifyObserver(*this, getComm(), getSig(), getOrder());
}

LogicalResult ReadSignalOp::verify() {
  return verifyObserver(*this, getComm(), getSig(), getOrder());
}

LogicalResult ResetSignalOp::verify() {
  if (isNullHandle(getComm()))
    return emitOpError("comm is a null pointer");
  if (isNegativeConstant(getSig()))
    return emitOpError("signal index must be non-negative");
  return success();
}

#define GET_OP_CLASSES
#include "tle/Dialect/TLE/IR/TLEOps.cpp.inc"
