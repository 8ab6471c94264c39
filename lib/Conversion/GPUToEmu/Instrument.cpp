//===- Instrument.cpp - Memory accesses and source lines for the emulator -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle-emu-instrument (Passes.td): the calls through which a host-compiled
// kernel tells the CPU emulator what it cannot see in compiled code: every
// memory access with its memory order (the race checker), the value of
// every load that may be a poll (spin hints), and the source location of
// every device-library call and block sync (reports and traces).
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/GPUToEmu/GPUToEmu.h"
#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"

#include "tle/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::tle {
#define GEN_PASS_DEF_INSTRUMENTEMUACCESSES
#include "tle/Conversion/Passes.h.inc"
} // namespace mlir::tle

using namespace mlir;
using namespace mlir::tle;
using ::tle::abi::Hook;

/// The ABI's memory order for an LLVM atomic ordering.
static int32_t orderOf(LLVM::AtomicOrdering ordering) {
  switch (ordering) {
  case LLVM::AtomicOrdering::acquire:
    return ::tle::kOrderAcquire;
  case LLVM::AtomicOrdering::release:
    return ::tle::kOrderRelease;
  case LLVM::AtomicOrdering::acq_rel:
    return ::tle::kOrderAcqRel;
  case LLVM::AtomicOrdering::seq_cst:
    return ::tle::kOrderSeqCst;
  default:
    return ::tle::kOrderRelaxed;
  }
}

/// Longest file name a site keeps (the emulator prints sites in reports).
constexpr size_t kMaxSiteFileBytes = 256;

/// "file:line:col" of the first file location in `loc`, or "". Reports
/// print it as it is, one line each: control bytes of the file name are
/// escaped (\n, \xNN) and a long name is cut.
static std::string formatLocation(Location loc) {
  std::string out;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    StringRef name = file.getFilename().getValue();
    for (unsigned char c : name.take_front(kMaxSiteFileBytes)) {
      if (c == '\n')
        out += "\\n";
      else if (c < 0x20 || c == 0x7f)
        out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) +
               "0123456789abcdef"[c & 15];
      else
        out.push_back(static_cast<char>(c));
    }
    if (name.size() > kMaxSiteFileBytes)
      out += "...";
    out += (":" + Twine(file.getLine()) + ":" + Twine(file.getColumn())).str();
    return WalkResult::interrupt();
  });
  return out;
}

/// Whether `addr` points into an llvm.alloca of this function: memory no
/// other thread can reach, so nothing to check.
static bool isPrivate(Value addr) {
  while (Operation *def = addr.getDefiningOp()) {
    if (isa<LLVM::AllocaOp>(def))
      return true;
    auto gep = dyn_cast<LLVM::GEPOp>(def);
    if (!gep)
      return false;
    addr = gep.getBase();
  }
  return false;
}

namespace {
/// Builds the calls for one module: declares the hooks once and keeps one
/// site string per distinct location.
class Instrumenter {
public:
  explicit Instrumenter(ModuleOp module)
      : module(module), ctx(module.getContext()), layout(module) {}

  void run() {
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::AtomicRMWOp,
              LLVM::AtomicCmpXchgOp, LLVM::FenceOp, LLVM::MemcpyOp,
              LLVM::MemmoveOp, LLVM::MemsetOp, LLVM::CallOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      instrument(op);
  }

private:
  void instrument(Operation *op) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      if (isPrivate(load.getAddr()))
        return;
      bool atomic = load.getOrdering() != LLVM::AtomicOrdering::not_atomic;
      OpBuilder b = after(op);
      Value addr = load.getAddr();
      access(b, op, addr, sizeOf(load.getType()),
             i32(b, op, atomic ? ::tle::kAccessAtomicLoad : ::tle::kAccessLoad),
             orderOf(load.getOrdering()));
      if (atomic || load.getVolatile_())
        spinHint(b, op, addr, load.getRes());
    } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      if (isPrivate(store.getAddr()))
        return;
      bool atomic = store.getOrdering() != LLVM::AtomicOrdering::not_atomic;
      OpBuilder b = after(op);
      access(
          b, op, store.getAddr(), sizeOf(store.getValue().getType()),
          i32(b, op, atomic ? ::tle::kAccessAtomicStore : ::tle::kAccessStore),
          orderOf(store.getOrdering()));
    } else if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op)) {
      OpBuilder b = after(op);
      access(b, op, rmw.getPtr(), sizeOf(rmw.getVal().getType()),
             i32(b, op, ::tle::kAccessAtomicUpdate),
             orderOf(rmw.getOrdering()));
      spinHint(b, op, rmw.getPtr(), rmw.getRes());
    } else if (auto cas = dyn_cast<LLVM::AtomicCmpXchgOp>(op)) {
      instrumentCas(cas);
    } else if (auto fence = dyn_cast<LLVM::FenceOp>(op)) {
      OpBuilder b = after(op);
      Value null = LLVM::ZeroOp::create(b, op->getLoc(), ptrType());
      access(b, op, null, 0, i32(b, op, ::tle::kAccessFence),
             orderOf(fence.getOrdering()));
    } else if (auto copy = dyn_cast<LLVM::MemcpyOp>(op)) {
      instrumentRange(op, copy.getSrc(), copy.getLen(), ::tle::kAccessLoad);
      instrumentRange(op, copy.getDst(), copy.getLen(), ::tle::kAccessStore);
    } else if (auto move = dyn_cast<LLVM::MemmoveOp>(op)) {
      instrumentRange(op, move.getSrc(), move.getLen(), ::tle::kAccessLoad);
      instrumentRange(op, move.getDst(), move.getLen(), ::tle::kAccessStore);
    } else if (auto set = dyn_cast<LLVM::MemsetOp>(op)) {
      instrumentRange(op, set.getDst(), set.getLen(), ::tle::kAccessStore);
    } else if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      instrumentCall(call);
    }
  }

  /// A cmpxchg that failed only read, with its failure order.
  void instrumentCas(LLVM::AtomicCmpXchgOp cas) {
    Operation *op = cas;
    OpBuilder b = after(op);
    Location loc = op->getLoc();
    Value old = LLVM::ExtractValueOp::create(b, loc, cas.getRes(), 0);
    Value ok = LLVM::ExtractValueOp::create(b, loc, cas.getRes(), 1);
    Value kind = LLVM::SelectOp::create(b, loc, ok,
                                        i32(b, op, ::tle::kAccessAtomicUpdate),
                                        i32(b, op, ::tle::kAccessAtomicLoad));
    Value order = LLVM::SelectOp::create(
        b, loc, ok, i32(b, op, orderOf(cas.getSuccessOrdering())),
        i32(b, op, orderOf(cas.getFailureOrdering())));
    accessWithOrder(b, op, cas.getPtr(), i64(b, op, sizeOf(old.getType())),
                    kind, order);
    spinHint(b, op, cas.getPtr(), old);
  }

  void instrumentRange(Operation *op, Value addr, Value len, int32_t kind) {
    if (isPrivate(addr))
      return;
    OpBuilder b = after(op);
    Value bytes = toI64(b, op->getLoc(), len);
    accessWithOrder(b, op, addr, bytes, i32(b, op, kind),
                    i32(b, op, ::tle::kOrderRelaxed));
  }

  /// Device-library calls and block syncs tell the emulator where they are.
  void instrumentCall(LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee || !wantsSite(*callee))
      return;
    Operation *op = call;
    OpBuilder before(op);
    LLVM::CallOp::create(before, op->getLoc(), hook(Hook::tleEmuSite),
                         ValueRange{site(before, op)});
    OpBuilder b = after(op);
    Value null = LLVM::ZeroOp::create(b, op->getLoc(), ptrType());
    LLVM::CallOp::create(b, op->getLoc(), hook(Hook::tleEmuSite),
                         ValueRange{null});
  }

  static bool wantsSite(StringRef callee) {
    if (callee == ::tle::abi::hook(Hook::tleEmuSyncBlock).name ||
        callee == ::tle::abi::hook(Hook::tleEmuSyncWarp).name)
      return true;
    for (const ::tle::abi::Function &fn : ::tle::abi::kFunctions)
      if (callee == fn.name)
        return true;
    return false;
  }

  void access(OpBuilder &b, Operation *op, Value addr, uint64_t bytes,
              Value kind, int32_t order) {
    accessWithOrder(b, op, addr, i64(b, op, bytes), kind, i32(b, op, order));
  }

  void accessWithOrder(OpBuilder &b, Operation *op, Value addr, Value bytes,
                       Value kind, Value order) {
    Location loc = op->getLoc();
    Value generic = addr;
    if (cast<LLVM::LLVMPointerType>(addr.getType()).getAddressSpace() != 0)
      generic = LLVM::AddrSpaceCastOp::create(b, loc, ptrType(), addr);
    LLVM::CallOp::create(b, loc, hook(Hook::tleEmuAccess),
                         ValueRange{generic, bytes, kind, order, site(b, op)});
  }

  /// tleEmuSpinHint(addr, value as i64) after a load that may be a poll.
  void spinHint(OpBuilder &b, Operation *op, Value addr, Value value) {
    Location loc = op->getLoc();
    Value generic = addr;
    if (cast<LLVM::LLVMPointerType>(addr.getType()).getAddressSpace() != 0)
      generic = LLVM::AddrSpaceCastOp::create(b, loc, ptrType(), addr);
    LLVM::CallOp::create(b, loc, hook(Hook::tleEmuSpinHint),
                         ValueRange{generic, toI64(b, loc, value)});
  }

  /// `v` zero-extended, or cut, to 64 bits; floats by their bits, pointers
  /// by their address, anything else as 0.
  Value toI64(OpBuilder &b, Location loc, Value v) {
    Type i64Type = b.getI64Type();
    Type type = v.getType();
    if (isa<LLVM::LLVMPointerType>(type))
      return LLVM::PtrToIntOp::create(b, loc, i64Type, v);
    if (auto f = dyn_cast<FloatType>(type)) {
      type = b.getIntegerType(f.getWidth());
      v = LLVM::BitcastOp::create(b, loc, type, v);
    }
    auto intType = dyn_cast<IntegerType>(type);
    if (!intType)
      return LLVM::ConstantOp::create(b, loc, i64Type, 0);
    if (intType.getWidth() < 64)
      return LLVM::ZExtOp::create(b, loc, i64Type, v);
    if (intType.getWidth() > 64)
      return LLVM::TruncOp::create(b, loc, i64Type, v);
    return v;
  }

  /// The site string of `op`'s location, or null.
  Value site(OpBuilder &b, Operation *op) {
    Location loc = op->getLoc();
    std::string text = formatLocation(loc);
    if (text.empty())
      return LLVM::ZeroOp::create(b, loc, ptrType());
    auto [it, fresh] = sites.try_emplace(text, "");
    if (fresh) {
      it->second = (kSitePrefix + Twine(sites.size() - 1)).str();
      // At the top of the module, in the order the sites were met.
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      if (lastSite)
        top.setInsertionPointAfter(lastSite);
      std::string bytes = text;
      bytes.push_back('\0');
      auto type =
          LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), bytes.size());
      lastSite = LLVM::GlobalOp::create(
          top, module.getLoc(), type, /*isConstant=*/true,
          LLVM::Linkage::Private, it->second, top.getStringAttr(bytes));
    }
    return LLVM::AddressOfOp::create(b, loc, ptrType(), it->second);
  }

  LLVM::LLVMFuncOp hook(Hook h) {
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    FailureOr<LLVM::LLVMFuncOp> func =
        lookupOrDeclareAbiFunction(b, module, ::tle::abi::hook(h));
    assert(succeeded(func) && "a module can always declare a hook");
    return *func;
  }

  static OpBuilder after(Operation *op) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    return b;
  }
  Value i32(OpBuilder &b, Operation *op, int32_t v) {
    return LLVM::ConstantOp::create(b, op->getLoc(), b.getI32Type(), v);
  }
  Value i64(OpBuilder &b, Operation *op, uint64_t v) {
    return LLVM::ConstantOp::create(b, op->getLoc(), b.getI64Type(),
                                    static_cast<int64_t>(v));
  }
  uint64_t sizeOf(Type type) { return layout.getTypeSize(type); }
  Type ptrType() { return LLVM::LLVMPointerType::get(ctx); }

  ModuleOp module;
  MLIRContext *ctx;
  DataLayout layout;
  llvm::StringMap<std::string> sites;
  Operation *lastSite = nullptr;
};
} // namespace

namespace mlir::tle {
namespace {
struct InstrumentEmuAccessesPass
    : impl::InstrumentEmuAccessesBase<InstrumentEmuAccessesPass> {
  void runOnOperation() override { Instrumenter(getOperation()).run(); }
};
} // namespace
} // namespace mlir::tle
