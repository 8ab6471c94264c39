//===- KernelMetadata.cpp - Launch metadata of gpu.func kernels -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Reads, from a kernel module before lowering, what a launcher needs and
// cannot see in PTX: which parameters to pass, whether the launch must be
// cooperative and how many barrier slots, signal words and counter words to
// create. A kernel's barriers, signals and counters are those of every
// function it reaches through direct calls, and those of its direct calls
// of the device ABI (IR built for FlagCX), counted like the ops they lower
// from.
//
//===----------------------------------------------------------------------===//

#include "tle/Compiler/KernelMetadata.h"

#include "tle/Conversion/GPUToEmu/GPUToEmu.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "tle/abi.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tle;
using ::tle::run::BundleKernel;

namespace {
/// The barriers and signal ops reachable from one kernel.
struct BarrierSummary {
  unsigned ops = 0;
  unsigned slots = 0;
  bool runtimeIndex = false;
  bool grid = false;
  /// Signal words the constant indices need, and whether an index is a
  /// runtime value.
  unsigned signalWords = 0;
  bool runtimeSignal = false;
  /// The same for counter words.
  unsigned counterWords = 0;
  bool runtimeCounter = false;
};

/// The group and slot index of a barrier op (of any team: each team has
/// its own nBarriers slots, so the slots a kernel needs are the most any
/// team's indices need), or a null index for any other op.
std::pair<BarrierGroup, Value> barrierOperands(Operation *op) {
  if (auto b = dyn_cast<DeviceIntraBarrierOp>(op))
    return {b.getGroup(), b.getIndex()};
  if (auto b = dyn_cast<DeviceBarrierOp>(op))
    return {b.getGroup(), b.getIndex()};
  return {BarrierGroup::block, nullptr};
}

/// The signal index of a signal op, of a signal shadow op, or of the
/// signal attached to a put, or null for any other op (and a put without
/// one).
Value signalIndex(Operation *op) {
  if (auto s = dyn_cast<SignalOp>(op))
    return s.getSig();
  if (auto s = dyn_cast<SignalWaitOp>(op))
    return s.getSig();
  if (auto s = dyn_cast<ReadSignalOp>(op))
    return s.getSig();
  if (auto s = dyn_cast<ResetSignalOp>(op))
    return s.getSig();
  if (auto s = dyn_cast<ShadowIncreaseOp>(op))
    return s.getSig();
  if (auto s = dyn_cast<ShadowWaitOp>(op))
    return s.getSig();
  if (auto p = dyn_cast<PutOp>(op))
    return p.getSignal();
  if (auto p = dyn_cast<PutValueOp>(op))
    return p.getSignal();
  return nullptr;
}
/// The value a call passes for ABI parameter `name` of `fn`, or null.
Value abiArgument(CallOpInterface call, const ::tle::abi::Function &fn,
                  StringRef name) {
  auto args = call.getArgOperands();
  for (unsigned i = 0; i < fn.numParams && i < args.size(); ++i)
    if (name == fn.paramNames[i])
      return args[i];
  return nullptr;
}

/// Adds `index` (a constant, or a runtime value) to a count of slots or
/// words; `runtime` is set for anything but a non-negative constant.
void countIndex(Value index, unsigned &count, bool &runtime) {
  APInt constant;
  if (index && matchPattern(index, m_ConstantInt(&constant)) &&
      !constant.isNegative())
    count = std::max<unsigned>(count, constant.getZExtValue() + 1);
  else
    runtime = true;
}

/// A direct call of a device-ABI entry point (IR built for FlagCX calls
/// them without the dialect's ops) counts as the op it lowers from: its
/// slot or signal index, and for the grid barrier (the tleIntraGridBarrier
/// functions, or a Triton barrier whose group is grid or not a constant) a
/// cooperative launch. False when `callee` is not an ABI function.
bool countAbiCall(CallOpInterface call, StringRef callee, BarrierSummary &sum) {
  const ::tle::abi::Function *fn = nullptr;
  for (const ::tle::abi::Function &f : ::tle::abi::kFunctions)
    if (callee == f.name)
      fn = &f;
  if (!fn)
    return false;
  StringRef what = fn->what;
  // A session's slot is its open's index; its barriers carry an epoch (or
  // Triton's session word) instead.
  if (what == "tle.session_open") {
    countIndex(abiArgument(call, *fn, "index"), sum.slots, sum.runtimeIndex);
    return true;
  }
  if (what == "tle.device_intra_barrier" || what == "tle.device_barrier" ||
      what == "tle.distributed_barrier" || what == "tle.session_barrier") {
    ++sum.ops;
    if (Value index = abiArgument(call, *fn, "index"))
      countIndex(index, sum.slots, sum.runtimeIndex);
    if (callee.starts_with("tleIntraGridBarrier"))
      sum.grid = true;
    if (Value group = abiArgument(call, *fn, "groupKind")) {
      APInt kind;
      if (!matchPattern(group, m_ConstantInt(&kind)) ||
          kind.getSExtValue() == ::tle::kCoopGrid)
        sum.grid = true;
    }
    return true;
  }
  if (what == "tle.signal" || what == "tle.signal_wait" ||
      what == "tle.read_signal" || what == "tle.reset_signal") {
    Value index = abiArgument(call, *fn, "signal");
    if (!index)
      index = abiArgument(call, *fn, "slot");
    countIndex(index, sum.signalWords, sum.runtimeSignal);
  }
  return true;
}

/// The counter index of a counter op or of the counter attached to a put,
/// or null.
Value counterIndex(Operation *op) {
  if (auto c = dyn_cast<CounterWaitOp>(op))
    return c.getCounter();
  if (auto c = dyn_cast<ReadCounterOp>(op))
    return c.getCounter();
  if (auto c = dyn_cast<ResetCounterOp>(op))
    return c.getCounter();
  if (auto p = dyn_cast<PutOp>(op))
    return p.getCounter();
  return nullptr;
}
} // namespace

/// Adds the barriers of `root`'s ops, and of every function they call
/// that `visited` has not seen yet, to `sum`.
static void collectBarriers(Operation *root, BarrierSummary &sum,
                            SmallPtrSetImpl<Operation *> &visited) {
  SmallVector<Operation *> work{root};
  while (!work.empty()) {
    Operation *fn = work.pop_back_val();
    if (!visited.insert(fn).second)
      continue;
    fn->walk([&](Operation *op) {
      if (auto [group, index] = barrierOperands(op); index) {
        ++sum.ops;
        sum.grid |= group == BarrierGroup::grid;
        countIndex(index, sum.slots, sum.runtimeIndex);
        return;
      }
      // A put can carry both a signal and a counter.
      Value sig = signalIndex(op), counter = counterIndex(op);
      if (sig)
        countIndex(sig, sum.signalWords, sum.runtimeSignal);
      if (counter)
        countIndex(counter, sum.counterWords, sum.runtimeCounter);
      if (sig || counter)
        return;
      auto call = dyn_cast<CallOpInterface>(op);
      if (!call)
        return;
      auto callee =
          llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
      if (!callee)
        return;
      if (countAbiCall(call, callee.getLeafReference().getValue(), sum))
        return;
      // Declarations (the ABI's, externals) have no body to walk.
      if (Operation *target = SymbolTable::lookupNearestSymbolFrom(op, callee))
        work.push_back(target);
    });
  }
}

std::vector<::tle::run::BundleSite>
mlir::tle::collectCallSites(ModuleOp module) {
  std::vector<::tle::run::BundleSite> sites;
  llvm::DenseSet<uint32_t> seen;
  module.walk([&](Operation *op) {
    if (!isa<DeviceIntraBarrierOp, DeviceBarrierOp, SessionBarrierOp, SignalOp,
             SignalWaitOp, CounterWaitOp, ShadowWaitOp>(op))
      return;
    CallSiteText site = callSiteOf(op->getLoc());
    if (site.id != 0 && seen.insert(site.id).second)
      sites.push_back({site.id, std::move(site.text)});
  });
  return sites;
}

FailureOr<std::vector<BundleKernel>>
mlir::tle::collectKernelMetadata(ModuleOp module) {
  std::vector<BundleKernel> kernels;
  llvm::StringSet<> names;
  bool failed = false;
  module.walk([&](gpu::GPUFuncOp func) {
    if (!func.isKernel())
      return;
    BundleKernel info;
    info.name = func.getName().str();
    if (!::tle::run::isValidKernelName(info.name)) {
      func.emitError("kernel name '") << info.name << "' is not a C identifier";
      failed = true;
      return;
    }
    if (!names.insert(info.name).second) {
      func.emitError("kernel name '")
          << info.name << "' is used by two gpu.modules";
      failed = true;
      return;
    }
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      std::string spelled = spellKernelParamType(type);
      if (spelled.empty()) {
        func.emitError("kernel parameter ")
            << i << " has type " << type
            << ", which a launcher cannot pass; use !llvm.ptr or a scalar";
        failed = true;
        return;
      }
      info.params.push_back(std::move(spelled));
    }
    BarrierSummary sum;
    SmallPtrSet<Operation *, 8> visited;
    collectBarriers(func, sum, visited);
    info.barrierOps = sum.ops;
    info.cooperative = sum.grid;
    if (!sum.runtimeIndex)
      info.barrierSlots = sum.slots;
    if (sum.runtimeSignal)
      info.signalWords.reset();
    else
      info.signalWords = sum.signalWords;
    if (sum.runtimeCounter)
      info.counterWords.reset();
    else
      info.counterWords = sum.counterWords;
    kernels.push_back(std::move(info));
  });
  if (failed)
    return failure();
  if (kernels.empty())
    return module.emitError("no kernel found: expected a gpu.module holding "
                            "a `gpu.func ... kernel`");
  return kernels;
}
