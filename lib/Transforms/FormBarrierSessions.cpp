//===- FormBarrierSessions.cpp - Barriers of a loop as one session --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle-form-barrier-sessions (Passes.td has the rules and an example): the
// barriers on one slot inside an scf.for or scf.while become the halves of
// a session whose epoch the loop carries as an iter_arg, opened in front of
// the loop and closed behind it. A stateless barrier reads the slot's epoch
// from memory and writes it back on every call; the session's halves touch
// only the flags, which is what a barrier in a loop costs when written with
// tle::BarrierSession by hand.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/Passes.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::tle {
#define GEN_PASS_DEF_FORMBARRIERSESSIONS
#include "tle/Conversion/Passes.h.inc"
} // namespace mlir::tle

using namespace mlir;
using namespace mlir::tle;

namespace {

/// The slot a session serves: every barrier it replaces names it.
struct SessionKey {
  Value comm;
  Value index;
  BarrierGroup group;
  bool operator==(const SessionKey &o) const {
    return comm == o.comm && index == o.index && group == o.group;
  }
};

/// The ops whose regions the epoch is threaded through.
bool isCarrier(Operation *op) {
  return isa<scf::ForOp, scf::WhileOp, scf::IfOp>(op);
}

/// The key of the barriers in `loop` when they can form one session, with
/// the ops between the loop and them (the carriers to thread the epoch
/// through) in `carriers`. None when the loop has no barrier, or when one
/// of the rules of Passes.td fails.
std::optional<SessionKey> sessionKey(LoopLikeOpInterface loop,
                                     llvm::DenseSet<Operation *> &carriers) {
  std::optional<SessionKey> key;
  bool ok = true;
  loop->walk([&](Operation *op) {
    // A callee could use the slot with a stateless call, which would read
    // an epoch word the session has not written yet.
    if (isa<CallOpInterface>(op))
      ok = false;
    // Another barrier on the communicator may be on the same slot: grid
    // barriers and intra barriers of tle.device_barrier share the slots'
    // epoch words. Other teams' barriers have slots of their own.
    if (auto team = dyn_cast<DeviceBarrierOp>(op))
      if (team.getTeam() == Team::intra)
        ok = false;
    auto barrier = dyn_cast<DeviceIntraBarrierOp>(op);
    if (!barrier || !ok)
      return ok ? WalkResult::advance() : WalkResult::interrupt();
    SessionKey k{barrier.getComm(), barrier.getIndex(), barrier.getGroup()};
    // One slot per session, named by the same values: two different
    // index values could still be the same slot at run time.
    if ((key && !(*key == k)) || k.group == BarrierGroup::grid ||
        barrier.getMultimem() || !loop.isDefinedOutsideOfLoop(k.comm) ||
        !loop.isDefinedOutsideOfLoop(k.index)) {
      ok = false;
      return WalkResult::interrupt();
    }
    key = k;
    for (Operation *p = op->getParentOp(); p != loop.getOperation();
         p = p->getParentOp()) {
      if (!isCarrier(p)) {
        ok = false;
        return WalkResult::interrupt();
      }
      carriers.insert(p);
    }
    return WalkResult::advance();
  });
  if (!ok)
    return std::nullopt;
  return key;
}

class SessionFormer {
public:
  SessionFormer(SessionKey key, const llvm::DenseSet<Operation *> &carriers)
      : key(key), carriers(carriers) {}

  /// Replaces the barriers of `block` (and of the carriers in it) by
  /// session halves, starting from `epoch`; returns the epoch at the end.
  Value threadBlock(Block &block, Value epoch) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto barrier = dyn_cast<DeviceIntraBarrierOp>(op)) {
        OpBuilder b(barrier);
        epoch = SessionBarrierOp::create(b, barrier.getLoc(), b.getI32Type(),
                                         barrier.getKind(), key.comm, key.index,
                                         epoch, key.group, barrier.getOrder());
        barrier.erase();
      } else if (carriers.contains(&op)) {
        epoch = threadCarrier(&op, epoch).second;
      }
    }
    return epoch;
  }

  /// Rebuilds the carrier `op` with the epoch as one more operand (scf.for
  /// and scf.while; none for scf.if) and one more result; returns the new
  /// op and the epoch after it.
  std::pair<Operation *, Value> threadCarrier(Operation *op, Value epoch) {
    OpBuilder b(op);
    Type i32 = b.getI32Type();
    Location loc = op->getLoc();
    OperationState state(loc, op->getName());
    state.addOperands(op->getOperands());
    if (!isa<scf::IfOp>(op))
      state.addOperands(epoch);
    state.addTypes(op->getResultTypes());
    state.addTypes(i32);
    state.propertiesAttr = op->getPropertiesAsAttribute();
    for (NamedAttribute attr : op->getDiscardableAttrs())
      state.addAttribute(attr.getName(), attr.getValue());
    for (Region &region : op->getRegions())
      state.addRegion()->takeBody(region);
    Operation *carrier = b.create(state);
    if (auto loop = dyn_cast<scf::ForOp>(carrier)) {
      Block *body = loop.getBody();
      Value out = threadBlock(*body, body->addArgument(i32, loc));
      cast<scf::YieldOp>(body->getTerminator()).getResultsMutable().append(out);
    } else if (auto loop = dyn_cast<scf::WhileOp>(carrier)) {
      // The epoch the condition forwards is the loop's result: a loop that
      // exits at the condition leaves with what the before region reached.
      Block &before = loop.getBefore().front();
      Value mid = threadBlock(before, before.addArgument(i32, loc));
      loop.getConditionOp().getArgsMutable().append(mid);
      Block &after = loop.getAfter().front();
      Value out = threadBlock(after, after.addArgument(i32, loc));
      cast<scf::YieldOp>(after.getTerminator()).getResultsMutable().append(out);
    } else {
      auto branch = cast<scf::IfOp>(carrier);
      if (branch.getElseRegion().empty()) {
        Block *block = b.createBlock(&branch.getElseRegion());
        scf::YieldOp::create(b, loc);
        (void)block;
      }
      for (Region *region :
           {&branch.getThenRegion(), &branch.getElseRegion()}) {
        Block &block = region->front();
        Value out = threadBlock(block, epoch);
        cast<scf::YieldOp>(block.getTerminator())
            .getResultsMutable()
            .append(out);
      }
    }
    op->replaceAllUsesWith(carrier->getResults().drop_back());
    op->erase();
    return {carrier, carrier->getResults().back()};
  }

  /// Opens the session in front of `loop`, threads the epoch through it and
  /// closes the session behind it.
  void form(Operation *loop) {
    OpBuilder b(loop);
    Location loc = loop->getLoc();
    Value epoch = SessionOpenOp::create(b, loc, b.getI32Type(), key.comm,
                                        key.index, key.group);
    auto [carrier, out] = threadCarrier(loop, epoch);
    b.setInsertionPointAfter(carrier);
    SessionCloseOp::create(b, loc, key.comm, key.index, out, key.group);
  }

private:
  SessionKey key;
  const llvm::DenseSet<Operation *> &carriers;
};

} // namespace

namespace mlir::tle {
namespace {

struct FormBarrierSessionsPass
    : impl::FormBarrierSessionsBase<FormBarrierSessionsPass> {
  void runOnOperation() override {
    struct Candidate {
      Operation *loop;
      SessionKey key;
      llvm::DenseSet<Operation *> carriers;
    };
    SmallVector<Candidate> found;
    // The outermost loop that can carry a session takes it; a loop that
    // cannot (two slots, a call) leaves its inner loops to try.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<scf::ForOp, scf::WhileOp>(op))
        return WalkResult::advance();
      llvm::DenseSet<Operation *> carriers;
      std::optional<SessionKey> key =
          sessionKey(cast<LoopLikeOpInterface>(op), carriers);
      if (!key)
        return WalkResult::advance();
      found.push_back({op, *key, std::move(carriers)});
      return WalkResult::skip();
    });
    for (Candidate &c : found)
      SessionFormer(c.key, c.carriers).form(c.loop);
  }
};

} // namespace
} // namespace mlir::tle
