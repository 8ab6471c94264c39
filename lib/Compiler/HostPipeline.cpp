//===- HostPipeline.cpp - Kernel module to host code for the emulator -----===//
//
// The `--target=host` lowering of tlec and tlerun. The CPU emulator runs
// every GPU thread as a fiber that calls the kernel as a plain C function;
// the kernel asks the emulator for its ids and block barriers through the
// hooks of tle/detail/EmuHooks.h, and calls the host build of the device
// library for the tle ops. So the gpu.modules are flattened into the host
// module, gpu ops become hook calls, everything goes to the LLVM dialect,
// and each kernel gets the `void NAME(void **args)` entry tleEmuLaunch
// calls. Anything that only a GPU can execute is rejected up front, at its
// location, rather than failing obscurely at JIT link time.
//
//===----------------------------------------------------------------------===//

#include "tle/Compiler/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tle;

/// Prefix of the renamed kernel bodies; `NAME` itself becomes the packed
/// entry point.
static constexpr StringLiteral kKernelBodyPrefix = "__tle_kernel_";

/// Reports every op of `module` that has no host meaning. All of them, not
/// just the first, so one run of tlec shows the whole list.
static LogicalResult checkHostSupported(ModuleOp module) {
  bool ok = true;
  module.walk([&](Operation *op) {
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    StringRef name = op->getName().getStringRef();
    if (ns == "nvvm" || ns == "rocdl" || ns == "nvgpu" || ns == "amdgpu") {
      op->emitError("'") << name << "' is a GPU-specific op and cannot run on "
                         << "the CPU emulator (--target=host)";
      ok = false;
    } else if (isa<LLVM::InlineAsmOp>(op)) {
      op->emitError("'") << name << "' (inline assembly) cannot run on the "
                         << "CPU emulator (--target=host)";
      ok = false;
    } else if (auto intr = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (!intr.getIntrin().starts_with("llvm.nvvm.") &&
          !intr.getIntrin().starts_with("llvm.amdgcn."))
        return;
      op->emitError("'") << name << "' of GPU intrinsic " << intr.getIntrin()
                         << " cannot run on the CPU emulator (--target=host)";
      ok = false;
    } else if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
      if (func.getNumWorkgroupAttributions() ||
          func.getNumPrivateAttributions()) {
        op->emitError("'") << name << "' with workgroup or private memory "
                           << "attributions is not supported by the CPU "
                           << "emulator (--target=host)";
        ok = false;
      }
    } else if (ns == "gpu" &&
               !isa<gpu::GPUModuleOp, gpu::ReturnOp, gpu::ThreadIdOp,
                    gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
                    gpu::BarrierOp>(op)) {
      op->emitError("'") << name << "' has no lowering for the CPU emulator "
                         << "(--target=host)";
      ok = false;
    }
  });
  return success(ok);
}

/// Moves the contents of every gpu.module into `module`; gpu.funcs become
/// func.funcs and kernels are renamed to their body name. Returns the kernel
/// names, in order.
static FailureOr<SmallVector<std::string>> flattenGpuModules(ModuleOp module) {
  SmallVector<std::string> kernels;
  SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
  SymbolTable symbols(module);
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    for (Operation &op :
         llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        continue;
      if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
        std::string name = func.getName().str();
        if (func.isKernel()) {
          kernels.push_back(name);
          name = (kKernelBodyPrefix + name).str();
        }
        OpBuilder b(gpuModule);
        auto newFunc = func::FuncOp::create(b, func.getLoc(), name,
                                            func.getFunctionType());
        newFunc.getBody().takeBody(func.getBody());
        newFunc.walk([](gpu::ReturnOp ret) {
          OpBuilder rb(ret);
          func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
          ret.erase();
        });
        func.erase();
        if (symbols.lookup(name)) {
          newFunc.emitError("symbol '") << name << "' is defined twice";
          return failure();
        }
        symbols.insert(newFunc);
        continue;
      }
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (symbol) {
        Operation *existing = symbols.lookup(symbol.getName());
        // ABI declarations appear once per gpu.module; keep one.
        if (existing && symbol.isDeclaration() &&
            cast<SymbolOpInterface>(existing).isDeclaration()) {
          op.erase();
          continue;
        }
        if (existing) {
          op.emitError("symbol '") << symbol.getName() << "' is defined twice";
          return failure();
        }
      }
      op.moveBefore(gpuModule);
      if (symbol)
        symbols.insert(&op);
    }
    gpuModule.erase();
  }
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  return kernels;
}

/// Declares (once) the emulator hook `name` in `module`.
static LLVM::LLVMFuncOp declareHook(ModuleOp module, StringRef name,
                                    Type result, ArrayRef<Type> params) {
  if (auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return func;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                  LLVM::LLVMFunctionType::get(result, params));
}

/// Replaces gpu ids, dims and barriers by calls of the emulator hooks.
static void lowerGpuOpsToHooks(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Type i32 = IntegerType::get(ctx, 32);
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto replaceId = [&](Operation *op, StringRef hookName, gpu::Dimension dim) {
    LLVM::LLVMFuncOp hook = declareHook(module, hookName, i32, {i32});
    OpBuilder b(op);
    Value d = LLVM::ConstantOp::create(b, op->getLoc(), i32,
                                       static_cast<int32_t>(dim));
    Value id =
        LLVM::CallOp::create(b, op->getLoc(), hook, ValueRange{d}).getResult();
    Value index =
        arith::IndexCastUIOp::create(b, op->getLoc(), b.getIndexType(), id);
    op->getResult(0).replaceAllUsesWith(index);
    op->erase();
  };
  module.walk([&](Operation *op) {
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replaceId(op, "tleEmuThreadId", id.getDimension());
    else if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replaceId(op, "tleEmuBlockId", id.getDimension());
    else if (auto id = dyn_cast<gpu::BlockDimOp>(op))
      replaceId(op, "tleEmuBlockDim", id.getDimension());
    else if (auto id = dyn_cast<gpu::GridDimOp>(op))
      replaceId(op, "tleEmuGridDim", id.getDimension());
    else if (isa<gpu::BarrierOp>(op)) {
      LLVM::LLVMFuncOp hook =
          declareHook(module, "tleEmuSyncBlock", voidType, {});
      OpBuilder b(op);
      LLVM::CallOp::create(b, op->getLoc(), hook, ValueRange{});
      op->erase();
    }
  });
}

/// Adds `void NAME(void **args)` for every kernel body `__tle_kernel_NAME`.
static LogicalResult addPackedEntries(ModuleOp module,
                                      ArrayRef<std::string> kernels) {
  MLIRContext *ctx = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto entryType =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType});
  for (const std::string &name : kernels) {
    auto body =
        module.lookupSymbol<LLVM::LLVMFuncOp>((kKernelBodyPrefix + name).str());
    if (!body)
      return module.emitError("kernel body of '") << name << "' was lost";
    Location loc = body.getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(body);
    auto entry = LLVM::LLVMFuncOp::create(b, loc, name, entryType);
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
  }
  return success();
}

LogicalResult mlir::tle::lowerToHost(ModuleOp module,
                                     const CompileOptions &options) {
  if (failed(checkHostSupported(module)))
    return failure();
  MLIRContext *ctx = module.getContext();
  // The flattening and the hooks build ops of these dialects directly.
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect>();
  {
    PassManager pm(ctx);
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(options.abi == BarrierABI::Unified
                                     ? "convert-tle-to-llvm{abi=unified}"
                                     : "convert-tle-to-llvm{abi=scalar}",
                                 pm, os)))
      return module.emitError("internal pipeline is invalid: ") << error;
    if (failed(pm.run(module)))
      return failure();
  }
  FailureOr<SmallVector<std::string>> kernels = flattenGpuModules(module);
  if (failed(kernels))
    return failure();
  lowerGpuOpsToHooks(module);
  {
    PassManager pm(ctx);
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline("convert-scf-to-cf,convert-to-llvm,"
                                 "reconcile-unrealized-casts",
                                 pm, os)))
      return module.emitError("internal pipeline is invalid: ") << error;
    if (failed(pm.run(module)))
      return failure();
  }
  return addPackedEntries(module, *kernels);
}

std::unique_ptr<llvm::Module>
mlir::tle::translateHostModule(ModuleOp module, llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tle-host");
  if (!llvmModule)
    return nullptr;
  // The host C ABI passes `bool` zero-extended and clang-compiled callees
  // rely on it; the MLIR declarations carry a bare i1.
  for (llvm::Function &func : *llvmModule) {
    if (!func.isDeclaration())
      continue;
    for (llvm::Argument &arg : func.args())
      if (arg.getType()->isIntegerTy(1))
        func.addParamAttr(arg.getArgNo(), llvm::Attribute::ZExt);
    for (llvm::User *user : func.users())
      if (auto *call = dyn_cast<llvm::CallBase>(user))
        for (unsigned i = 0; i < call->arg_size(); ++i)
          if (call->getArgOperand(i)->getType()->isIntegerTy(1))
            call->addParamAttr(i, llvm::Attribute::ZExt);
  }
  return llvmModule;
}
