//===- CudaPipeline.cpp - Kernel module to PTX ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The `--target=cuda` lowering (tle-cuda-pipeline): the tle ops become
// device-ABI calls, the rest follows MLIR's gpu-lower-to-nvvm-pipeline (device
// half only; the kernels are already outlined in gpu.modules and there is no
// host code), and MLIR's GPU serialization links the device library, optimizes
// and emits PTX. The NVVM target is attached here rather than by the upstream
// pipeline because only `nvvm-attach-target` takes the bitcode libraries to
// link. After linking, every device-ABI function the kernels call must be
// defined: a library without them is refused, naming them.
//
//===----------------------------------------------------------------------===//

#include "HostPipeline.h"

#include "tle/Conversion/Passes.h"
#include "tle/abi.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace mlir;
using namespace mlir::tle;

void mlir::tle::buildCudaPipeline(OpPassManager &pm,
                                  const CompileOptions &options) {
  // Barriers in loops carry their epoch in SSA values (barrier sessions).
  pm.addPass(createFormBarrierSessions());
  ConvertTLEToLLVMOptions tle;
  tle.abi = options.abi;
  // Barriers and signals pass their op's call-site id (docs/design.md,
  // "Call sites"); tlec writes the ids' table into the bundle.
  tle.sites = options.callSites;
  pm.addPass(createConvertTLEToLLVM(tle));
  // The device half of buildLowerToNVVMPassPipeline in
  // mlir/lib/Dialect/GPU/Pipelines/GPUToNVVMPipeline.cpp (LLVM 22); the
  // kernels are already outlined in gpu.modules and there is no host code.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.arch;
  target.optLevel = options.optLevel;
  if (!options.deviceLibrary.empty())
    target.linkLibs.push_back(options.deviceLibrary);
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
  gpu.addPass(createReconcileUnrealizedCastsPass());
}

FailureOr<CudaArtifacts>
mlir::tle::serializeToPTX(ModuleOp module, const CompileOptions &options) {
  CudaArtifacts out;
  unsigned gpuModules = 0;
  module.walk([&](gpu::GPUModuleOp) { ++gpuModules; });
  if (gpuModules != 1)
    return module.emitError("expected exactly one gpu.module, found ")
           << gpuModules;
  auto onOptimized = [&](llvm::Module &llvmModule) {
    llvm::raw_string_ostream os(out.optimizedLLVM);
    llvmModule.print(os, nullptr);
  };
  auto onISA = [&](StringRef isa) { out.ptx += isa.str(); };
  // MLIR links the device library with LinkOnlyNeeded and internalizes it.
  // Two things then stand between the kernels and the library's code:
  // - clang stamps every library function with "target-cpu",
  //   "target-features" and (the library is built flush-to-zero for
  //   Triton's sake) "denormal-fp-math-f32", which the kernels MLIR emits do
  //   not carry (the target machine supplies cpu and features for the whole
  //   module), and LLVM 22's inliner refuses to inline across differing
  //   attributes of these kinds: every barrier stayed an out-of-line call.
  //   The library does no floating point, so its denormal mode is moot;
  // - a library that marks its exports `used` (as an earlier TLE bitcode
  //   did, and others may) keeps them all alive through GlobalDCE.
  // Once linked and internalized the functions are ours: drop both.
  // A library without the device ABI (an empty or unrelated .bc) links
  // without complaint and leaves the calls as `.extern .func` in the PTX,
  // which fails only when the driver loads it: name them now.
  std::vector<std::string> undefined;
  auto onLinked = [&](llvm::Module &llvmModule) {
    if (!options.deviceLibrary.empty())
      for (const ::tle::abi::Function &abiFn : ::tle::abi::kFunctions)
        if (llvm::Function *fn = llvmModule.getFunction(abiFn.name))
          if (fn->isDeclaration() && !fn->use_empty())
            undefined.push_back(abiFn.name);
    for (llvm::Function &fn : llvmModule)
      if (fn.hasLocalLinkage()) {
        for (llvm::StringRef attr :
             {"target-cpu", "target-features", "denormal-fp-math",
              "denormal-fp-math-f32"})
          fn.removeFnAttr(attr);
      }
    llvm::removeFromUsedLists(llvmModule, [](llvm::Constant *c) {
      auto *gv = dyn_cast<llvm::GlobalValue>(c->stripPointerCasts());
      return gv && gv->hasLocalLinkage();
    });
  };
  gpu::TargetOptions targetOptions(
      /*toolkitPath=*/{}, /*librariesToLink=*/{}, /*cmdOptions=*/{},
      /*elfSection=*/{}, gpu::CompilationTarget::Assembly,
      /*getSymbolTableCallback=*/{}, /*initialLlvmIRCallback=*/{}, onLinked,
      onOptimized, onISA);
  if (failed(
          gpu::transformGpuModulesToBinaries(module, nullptr, targetOptions)))
    return failure();
  if (!undefined.empty()) {
    std::string names;
    for (const std::string &name : undefined)
      names += (names.empty() ? "" : ", ") + name;
    return module.emitError("the device library '")
           << options.deviceLibrary
           << "' does not define the device-ABI function(s) the kernels "
              "call: "
           << names << " (is it TLE's libtle_device.bc?)";
  }
  // The ISA callback is the documented way to see the PTX; read it back from
  // the gpu.binary as well in case a serializer does not call it.
  if (out.ptx.empty())
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects())
        if (auto obj = dyn_cast<gpu::ObjectAttr>(object))
          out.ptx += obj.getObject().getValue().str();
    });
  if (out.ptx.empty())
    return module.emitError("the NVVM serializer produced no PTX");
  return out;
}
