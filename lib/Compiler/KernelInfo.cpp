//===- KernelInfo.cpp - Launch metadata of gpu.func kernels ---------------===//
//
// Reads, from a kernel module before lowering, what a launcher needs and
// cannot see in PTX: which parameters to pass, whether the launch must be
// cooperative and how many barrier slots to create.
//
//===----------------------------------------------------------------------===//

#include "tle/Compiler/KernelInfo.h"

#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tle;

/// The bundle's spelling of a parameter type, or "" if it has none.
static std::string spellParamType(Type type) {
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

/// Fills the barrier fields of `info` from the barriers inside `func`.
static void collectBarriers(gpu::GPUFuncOp func, KernelInfo &info) {
  bool runtimeIndex = false;
  unsigned slots = 0;
  func.walk([&](DeviceIntraBarrierOp barrier) {
    ++info.barrierOps;
    if (barrier.getGroup() == BarrierGroup::grid)
      info.cooperative = true;
    APInt index;
    if (matchPattern(barrier.getIndex(), m_ConstantInt(&index)) &&
        !index.isNegative())
      slots = std::max<unsigned>(slots, index.getZExtValue() + 1);
    else
      runtimeIndex = true;
  });
  if (!runtimeIndex)
    info.barrierSlots = slots;
}

FailureOr<std::vector<KernelInfo>>
mlir::tle::collectKernelInfo(ModuleOp module) {
  std::vector<KernelInfo> kernels;
  llvm::StringSet<> names;
  bool failed = false;
  module.walk([&](gpu::GPUFuncOp func) {
    if (!func.isKernel())
      return;
    KernelInfo info;
    info.name = func.getName().str();
    if (!names.insert(info.name).second) {
      func.emitError("kernel name '")
          << info.name << "' is used by two gpu.modules";
      failed = true;
      return;
    }
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      std::string spelled = spellParamType(type);
      if (spelled.empty()) {
        func.emitError("kernel parameter ")
            << i << " has type " << type
            << ", which a launcher cannot pass; use !llvm.ptr or a scalar";
        failed = true;
        return;
      }
      info.paramTypes.push_back(std::move(spelled));
    }
    collectBarriers(func, info);
    kernels.push_back(std::move(info));
  });
  if (failed)
    return failure();
  if (kernels.empty())
    return module.emitError("no kernel found: expected a gpu.module holding "
                            "a `gpu.func ... kernel`");
  return kernels;
}
