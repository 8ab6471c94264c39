//===- Compile.cpp - The one compile entry point of tlec and tlerun -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// compileModule: validates the options, collects the kernels' launch
// metadata, runs the cuda or host pipeline and the translation that
// follows it, and stops where the caller asked (lowered MLIR, LLVM IR, or a
// bundle). tlec and tlerun's in-process compiler both call it, so a kernel
// tlerun compiles is byte for byte what tlec would bundle.
//
//===----------------------------------------------------------------------===//

#include "HostPipeline.h"

#include "tle/Compiler/KernelMetadata.h"
#include "tle/Compiler/Pipelines.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tle;

std::string mlir::tle::validateOptions(const CompileOptions &options) {
  if (options.optLevel > 3)
    return "optimization level " + std::to_string(options.optLevel) +
           " is out of range (0-3)";
  if (options.target != CompileTarget::Cuda)
    return "";
  // sm_NN or sm_NNa/f: the device library needs the PTX memory model
  // (scoped acquire/release), which starts with sm_70.
  StringRef arch = options.arch;
  unsigned sm = 0;
  StringRef digits =
      arch.drop_front(3).take_while([](char c) { return llvm::isDigit(c); });
  StringRef suffix = arch.drop_front(3 + digits.size());
  if (!arch.starts_with("sm_") || digits.empty() ||
      digits.getAsInteger(10, sm) ||
      !(suffix.empty() || suffix == "a" || suffix == "f"))
    return "--arch '" + options.arch +
           "' is not an NVIDIA GPU architecture of the form sm_NN (e.g. "
           "sm_90)";
  if (sm < 70)
    return "--arch " + options.arch +
           " is not supported: the device library needs sm_70 or newer "
           "(scoped acquire/release); TLE is tuned for sm_90";
  return "";
}

std::string mlir::tle::defaultDeviceLibrary(const char *argv0,
                                            void *addressInTool) {
  if (const char *env = std::getenv("TLE_DEVICE_BC"))
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, addressInTool);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "libtle_device.bc");
  return std::string(path);
}

static std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// Runs `build`'s pipeline on `module`.
template <typename Build>
static LogicalResult runPipeline(ModuleOp module, Build build) {
  PassManager pm(module.getContext());
  build(pm);
  return pm.run(module);
}

FailureOr<CompileResult> mlir::tle::compileModule(ModuleOp module,
                                                  const CompileOptions &options,
                                                  CompileStage stage,
                                                  StringRef source) {
  std::string invalid = validateOptions(options);
  if (!invalid.empty())
    return module.emitError(invalid);
  FailureOr<std::vector<::tle::run::BundleKernel>> kernels =
      collectKernelMetadata(module);
  if (failed(kernels))
    return failure();
  CompileResult result;
  result.bundle.source = source.str();
  result.bundle.kernels = std::move(*kernels);
  // Before the pipeline, which forms sessions (same locations) and lowers.
  if (options.callSites)
    result.bundle.sites = collectCallSites(module);

  if (options.target == CompileTarget::Cuda) {
    if (failed(runPipeline(module, [&](OpPassManager &pm) {
          buildCudaPipeline(pm, options);
        })))
      return failure();
    if (stage == CompileStage::LoweredMLIR) {
      result.text = printModule(module);
      return result;
    }
    FailureOr<CudaArtifacts> artifacts = serializeToPTX(module, options);
    if (failed(artifacts))
      return failure();
    if (stage == CompileStage::LLVMIR) {
      result.text = std::move(artifacts->optimizedLLVM);
      return result;
    }
    result.bundle.target = "cuda";
    result.bundle.arch = options.arch;
    result.bundle.format = "ptx";
    result.bundle.code = std::move(artifacts->ptx);
    return result;
  }

  if (failed(runPipeline(module, [&](OpPassManager &pm) {
        buildHostPipeline(pm, options.abi, options.callSites);
      })))
    return failure();
  if (stage == CompileStage::LoweredMLIR) {
    result.text = printModule(module);
    return result;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateHostModule(module, llvmContext);
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(llvm::Triple(llvm::sys::getProcessTriple()));
  optimizeHostModule(*llvmModule, options.optLevel);
  std::string ir;
  llvm::raw_string_ostream os(ir);
  llvmModule->print(os, nullptr);
  if (stage == CompileStage::LLVMIR) {
    result.text = std::move(ir);
    return result;
  }
  result.bundle.target = "host";
  result.bundle.arch = llvm::sys::getProcessTriple();
  result.bundle.format = "llvm";
  result.bundle.code = std::move(ir);
  return result;
}
