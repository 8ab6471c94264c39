//===- HostPipeline.cpp - Kernel module to host code for the emulator -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The `--target=host` lowering: the passes of tle/Conversion/Passes.td
// chained into `tle-host-pipeline`, and the translation of its result to
// LLVM IR with the host C ABI's `zeroext` on i1 arguments.
//
//===----------------------------------------------------------------------===//

#include "HostPipeline.h"

#include "tle/Compiler/Pipelines.h"
#include "tle/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::tle;

void mlir::tle::buildHostPipeline(OpPassManager &pm, BarrierABI abi,
                                  bool callSites) {
  pm.addPass(createVerifyHostKernels());
  // Barriers in loops carry their epoch in SSA values (barrier sessions).
  pm.addPass(createFormBarrierSessions());
  ConvertTLEToLLVMOptions tle;
  tle.abi = abi;
  // Barriers and signals pass their op's call-site id (docs/design.md,
  // "Call sites"); tlec writes the ids' table into the bundle.
  tle.sites = callSites;
  pm.addPass(createConvertTLEToLLVM(tle));
  pm.addPass(createFlattenGpuModules());
  pm.addPass(createConvertGpuToEmuHooks());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createInstrumentEmuAccesses());
  pm.addPass(createEmuEntryPoints());
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
