//===- GPUToEmu.cpp - Kernel modules for the CPU emulator -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The passes of the host lowering (Passes.td): tle-verify-host-kernels,
// tle-flatten-gpu-modules, convert-gpu-to-tle-emu and tle-emu-entry-points.
// The CPU emulator runs every GPU thread as a fiber that calls the kernel as
// a plain C function; the kernel asks the emulator for its ids and block
// barriers through hooks, and calls the host build of the device library
// for the tle ops. Hook names and signatures come from tle/abi.def.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/GPUToEmu/GPUToEmu.h"
#include "tle/Conversion/Passes.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"

#include "tle/Bundle/Bundle.h"
#include "tle/abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::tle {
#define GEN_PASS_DEF_VERIFYHOSTKERNELS
#define GEN_PASS_DEF_FLATTENGPUMODULES
#define GEN_PASS_DEF_CONVERTGPUTOEMUHOOKS
#define GEN_PASS_DEF_EMUENTRYPOINTS
#include "tle/Conversion/Passes.h.inc"
} // namespace mlir::tle

using namespace mlir;
using namespace mlir::tle;

std::string mlir::tle::spellKernelParamType(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return "ptr";
  if (type.isIndex())
    return "index";
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    if (width == 1 || width == 8 || width == 16 || width == 32 || width == 64)
      return "i" + std::to_string(width);
    return "";
  }
  if (type.isF16())
    return "f16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  return "";
}

/// Whether `op` only declares its symbol. SymbolOpInterface::isDeclaration
/// is false for every function op (a public declaration would otherwise be
/// invalid), so functions are asked whether they have a body.
static bool isDeclarationOnly(Operation *op) {
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    return fn.isExternal();
  auto symbol = dyn_cast<SymbolOpInterface>(op);
  return symbol && symbol.isDeclaration();
}

/// Why `name` may not be defined by a kernel module, or "" if it may.
static std::string reservedBecause(StringRef name) {
  if (name.starts_with(kReservedPrefix))
    return "names starting with '" + kReservedPrefix.str() +
           "' are reserved for the host lowering";
  for (const ::tle::abi::Function &fn : ::tle::abi::kHooks)
    if (name == fn.name)
      return "it is an emulator hook";
  for (const ::tle::abi::Function &fn : ::tle::abi::kFunctions)
    if (name == fn.name)
      return "it is a device ABI function, defined by the device library";
  return "";
}

//===----------------------------------------------------------------------===//
// tle-verify-host-kernels
//===----------------------------------------------------------------------===//

/// Reports `op` if it has no meaning on the host; returns whether it does.
static bool checkHostOp(Operation *op) {
  StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
  StringRef name = op->getName().getStringRef();
  if (ns == "nvvm" || ns == "rocdl" || ns == "nvgpu" || ns == "amdgpu") {
    op->emitError("'") << name << "' is a GPU-specific op and cannot run on "
                       << "the CPU emulator (--target=host)";
    return false;
  }
  if (isa<LLVM::InlineAsmOp>(op)) {
    op->emitError("'") << name << "' (inline assembly) cannot run on the "
                       << "CPU emulator (--target=host)";
    return false;
  }
  if (auto intr = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
    if (!intr.getIntrin().starts_with("llvm.nvvm.") &&
        !intr.getIntrin().starts_with("llvm.amdgcn."))
      return true;
    op->emitError("'") << name << "' of GPU intrinsic " << intr.getIntrin()
                       << " cannot run on the CPU emulator (--target=host)";
    return false;
  }
  if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
    if (func.getNumWorkgroupAttributions() ||
        func.getNumPrivateAttributions()) {
      op->emitError("'") << name << "' with workgroup or private memory "
                         << "attributions is not supported by the CPU "
                         << "emulator (--target=host)";
      return false;
    }
    if (func.isKernel() && !::tle::run::isValidKernelName(func.getName())) {
      op->emitError("kernel name '")
          << func.getName() << "' is not a C identifier";
      return false;
    }
    return true;
  }
  if (ns == "gpu" &&
      !isa<gpu::GPUModuleOp, gpu::ReturnOp, gpu::ThreadIdOp, gpu::BlockIdOp,
           gpu::BlockDimOp, gpu::GridDimOp, gpu::BarrierOp>(op)) {
    op->emitError("'") << name << "' has no lowering for the CPU emulator "
                       << "(--target=host)";
    return false;
  }
  return true;
}

namespace mlir::tle {
namespace {
struct VerifyHostKernelsPass
    : impl::VerifyHostKernelsBase<VerifyHostKernelsPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](Operation *op) {
      ok &= checkHostOp(op);
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!symbol || isDeclarationOnly(op))
        return;
      std::string why = reservedBecause(symbol.getName());
      if (!why.empty()) {
        op->emitError("symbol '")
            << symbol.getName() << "' is reserved (" << why << ")";
        ok = false;
      }
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::tle

//===----------------------------------------------------------------------===//
// tle-flatten-gpu-modules
//===----------------------------------------------------------------------===//

/// Moves the ops of `gpuModule` before it in `symbols`' module.
static LogicalResult flattenOne(gpu::GPUModuleOp gpuModule,
                                SymbolTable &symbols) {
  for (Operation &op :
       llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
      std::string name = func.getName().str();
      OpBuilder b(gpuModule);
      std::string bodyName =
          func.isKernel() ? (kKernelBodyPrefix + name).str() : name;
      auto newFunc = func::FuncOp::create(b, func.getLoc(), bodyName,
                                          func.getFunctionType());
      if (func.isKernel()) {
        std::string params;
        for (Type type : func.getArgumentTypes())
          params += (params.empty() ? "" : ",") + spellKernelParamType(type);
        newFunc->setAttr(kEmuKernelAttr, b.getStringAttr(name));
        newFunc->setAttr(kEmuParamsAttr, b.getStringAttr(params));
      }
      newFunc.getBody().takeBody(func.getBody());
      newFunc.walk([](gpu::ReturnOp ret) {
        OpBuilder rb(ret);
        func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
        ret.erase();
      });
      func.erase();
      if (symbols.lookup(bodyName))
        return newFunc.emitError("symbol '")
               << bodyName << "' is defined twice";
      symbols.insert(newFunc);
      continue;
    }
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (symbol) {
      Operation *existing = symbols.lookup(symbol.getName());
      // ABI declarations appear once per gpu.module; keep one.
      if (existing && isDeclarationOnly(&op) && isDeclarationOnly(existing)) {
        op.erase();
        continue;
      }
      if (existing)
        return op.emitError("symbol '")
               << symbol.getName() << "' is defined twice";
    }
    op.moveBefore(gpuModule);
    if (symbol)
      symbols.insert(&op);
  }
  gpuModule.erase();
  return success();
}

namespace mlir::tle {
namespace {
struct FlattenGpuModulesPass
    : impl::FlattenGpuModulesBase<FlattenGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    SymbolTable symbols(module);
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      if (failed(flattenOne(gpuModule, symbols)))
        return signalPassFailure();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};
} // namespace
} // namespace mlir::tle

//===----------------------------------------------------------------------===//
// convert-gpu-to-tle-emu
//===----------------------------------------------------------------------===//

/// Declares (once) the emulator hook `hook` in `module`.
static LLVM::LLVMFuncOp declareHook(ModuleOp module, ::tle::abi::Hook hook) {
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  FailureOr<LLVM::LLVMFuncOp> func =
      lookupOrDeclareAbiFunction(b, module, ::tle::abi::hook(hook));
  assert(succeeded(func) && "a module can always declare a hook");
  return *func;
}

namespace mlir::tle {
namespace {
struct ConvertGpuToEmuHooksPass
    : impl::ConvertGpuToEmuHooksBase<ConvertGpuToEmuHooksPass> {
  void runOnOperation() override {
    using ::tle::abi::Hook;
    ModuleOp module = getOperation();
    Type i32 = IntegerType::get(&getContext(), 32);
    auto replaceId = [&](Operation *op, Hook hook, gpu::Dimension dim) {
      LLVM::LLVMFuncOp callee = declareHook(module, hook);
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value d = LLVM::ConstantOp::create(b, loc, i32, static_cast<int>(dim));
      Value id =
          LLVM::CallOp::create(b, loc, callee, ValueRange{d}).getResult();
      Value index = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), id);
      op->getResult(0).replaceAllUsesWith(index);
      op->erase();
    };
    module.walk([&](Operation *op) {
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
        replaceId(op, Hook::tleEmuThreadId, id.getDimension());
      else if (auto id = dyn_cast<gpu::BlockIdOp>(op))
        replaceId(op, Hook::tleEmuBlockId, id.getDimension());
      else if (auto id = dyn_cast<gpu::BlockDimOp>(op))
        replaceId(op, Hook::tleEmuBlockDim, id.getDimension());
      else if (auto id = dyn_cast<gpu::GridDimOp>(op))
        replaceId(op, Hook::tleEmuGridDim, id.getDimension());
      else if (isa<gpu::BarrierOp>(op)) {
        OpBuilder b(op);
        LLVM::CallOp::create(b, op->getLoc(),
                             declareHook(module, Hook::tleEmuSyncBlock),
                             ValueRange{});
        op->erase();
      }
    });
  }
};
} // namespace
} // namespace mlir::tle

//===----------------------------------------------------------------------===//
// tle-emu-entry-points
//===----------------------------------------------------------------------===//

/// Adds `__tle_entry.NAME(void **args)` calling `body`, and the constant
/// `__tle_params.NAME`.
static void addEntry(ModuleOp module, LLVM::LLVMFuncOp body, StringRef name,
                     StringRef params) {
  MLIRContext *ctx = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto entryType =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType});
  Location loc = body.getLoc();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(body);
  auto entry =
      LLVM::LLVMFuncOp::create(b, loc, (kEntryPrefix + name).str(), entryType);
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(body.getFunctionType().getParams())) {
    Value slot =
        LLVM::GEPOp::create(b, loc, ptrType, ptrType, block->getArgument(0),
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value valuePtr = LLVM::LoadOp::create(b, loc, ptrType, slot);
    args.push_back(LLVM::LoadOp::create(b, loc, type, valuePtr));
  }
  LLVM::CallOp::create(b, loc, body, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  body.setLinkage(LLVM::Linkage::Internal);

  b.setInsertionPointAfter(entry);
  std::string text = params.str();
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                         LLVM::Linkage::External, (kParamsPrefix + name).str(),
                         b.getStringAttr(text));
}

namespace mlir::tle {
namespace {
struct EmuEntryPointsPass : impl::EmuEntryPointsBase<EmuEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(kEmuKernelAttr))
        kernels.push_back(func);
    for (LLVM::LLVMFuncOp body : kernels) {
      auto name = body->getAttrOfType<StringAttr>(kEmuKernelAttr);
      auto params = body->getAttrOfType<StringAttr>(kEmuParamsAttr);
      if (!name || !params) {
        body.emitError("'") << kEmuKernelAttr << "' and '" << kEmuParamsAttr
                            << "' must be strings";
        return signalPassFailure();
      }
      addEntry(module, body, name.getValue(), params.getValue());
      body->removeAttr(kEmuKernelAttr);
      body->removeAttr(kEmuParamsAttr);
    }
  }
};
} // namespace
} // namespace mlir::tle
