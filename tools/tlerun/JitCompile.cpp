//===- JitCompile.cpp - tlerun's in-process compiler ----------------------===//
//
// With the compiler built, tlerun takes MLIR directly: for the emulator it
// lowers the module with tlec's host pipeline and JIT-compiles it with MLIR's
// ExecutionEngine (ORC); for cuda it produces the PTX tlec would bundle. Host
// bundles (LLVM IR) are JIT-compiled the same way. The JIT resolves the
// emulator hooks and the host build of the device library from libtle.so,
// which tlerun links.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "tle/Compiler/KernelInfo.h"
#include "tle/Compiler/Pipelines.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using ::tle::run::Bundle;
using ::tle::run::BundleKernel;
using ::tle::run::LoadedKernel;
using ::tle::run::Options;

bool ::tle::run::haveCompiler() { return true; }

/// The device library next to tlerun in the build (bin/../lib).
static std::string defaultDeviceLib() {
  if (const char *env = std::getenv("TLE_DEVICE_BC"))
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(
      "tlerun", reinterpret_cast<void *>(&defaultDeviceLib));
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "libtle_device.bc");
  return std::string(path);
}

static void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::tle::registerCompilerPasses();
  });
}

/// JIT-compiles a host module (MLIR in the LLVM dialect, or LLVM IR text when
/// `llvmIR` is set) and looks up the kernel's packed entry.
static bool jit(ModuleOp module, const std::string *llvmIR,
                const std::string &path, LoadedKernel &out,
                std::string &error) {
  std::string parseError;
  auto builder =
      [&](Operation *op,
          llvm::LLVMContext &context) -> std::unique_ptr<llvm::Module> {
    if (!llvmIR)
      return mlir::tle::translateHostModule(cast<ModuleOp>(op), context);
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> parsed =
        llvm::parseIR(llvm::MemoryBufferRef(*llvmIR, path), diag, context);
    if (!parsed) {
      llvm::raw_string_ostream os(parseError);
      diag.print("tlerun", os);
    }
    return parsed;
  };
  auto transformer = makeOptimizingTransformer(/*optLevel=*/2, 0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.llvmModuleBuilder = builder;
  engineOptions.transformer = transformer;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(module, engineOptions);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError()) +
            parseError;
    return false;
  }
  llvm::Expected<void *> entry = (*engine)->lookup(out.meta.name);
  if (!entry) {
    error = "JIT: kernel entry '" + out.meta.name +
            "' not found: " + llvm::toString(entry.takeError());
    return false;
  }
  out.hostEntry = reinterpret_cast<void (*)(void **)>(*entry);
  out.owner = std::shared_ptr<ExecutionEngine>(std::move(*engine));
  return true;
}

bool ::tle::run::compileKernel(const Options &options, const std::string &path,
                               const std::string &source,
                               const Bundle *hostBundle, LoadedKernel &out,
                               std::string &error) {
  initializeOnce();
  DialectRegistry registry;
  mlir::tle::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // A located one-line error is the interface; the op dump is noise.
  context.printOpOnDiagnostic(false);

  if (hostBundle) {
    const BundleKernel *meta = hostBundle->findKernel(options.kernel);
    out.meta = *meta;
    context.loadDialect<LLVM::LLVMDialect>();
    OwningOpRef<ModuleOp> empty = ModuleOp::create(UnknownLoc::get(&context));
    return jit(*empty, &source, path, out, error);
  }

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, path), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, llvm::errs());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    error = "cannot parse '" + path + "'";
    return false;
  }
  FailureOr<std::vector<mlir::tle::KernelInfo>> kernels =
      mlir::tle::collectKernelInfo(*module);
  if (failed(kernels)) {
    error = "cannot compile '" + path + "'";
    return false;
  }
  const mlir::tle::KernelInfo *info = nullptr;
  std::string names;
  for (const mlir::tle::KernelInfo &kernel : *kernels) {
    names += " " + kernel.name;
    if (kernel.name == options.kernel)
      info = &kernel;
  }
  if (!info) {
    error = "no kernel '" + options.kernel + "' in '" + path +
            "' (it has:" + names + ")";
    return false;
  }
  out.meta = {info->name, info->paramTypes, info->cooperative,
              info->barrierSlots, info->barrierOps};

  mlir::tle::CompileOptions compileOptions;
  if (options.target == "cuda") {
    compileOptions.target = mlir::tle::CompileTarget::Cuda;
    compileOptions.deviceLibrary =
        options.deviceLib.empty() ? defaultDeviceLib() : options.deviceLib;
    if (!llvm::sys::fs::exists(compileOptions.deviceLibrary)) {
      error = "device library '" + compileOptions.deviceLibrary +
              "' not found (pass --device-lib)";
      return false;
    }
    if (failed(mlir::tle::lowerToNVVM(*module, compileOptions))) {
      error = "cannot compile '" + path + "' for cuda";
      return false;
    }
    FailureOr<mlir::tle::CudaArtifacts> artifacts =
        mlir::tle::serializeToPTX(*module, compileOptions);
    if (failed(artifacts)) {
      error = "cannot compile '" + path + "' for cuda";
      return false;
    }
    out.ptx = artifacts->ptx;
    return true;
  }
  compileOptions.target = mlir::tle::CompileTarget::Host;
  if (failed(mlir::tle::lowerToHost(*module, compileOptions))) {
    error = "cannot compile '" + path + "' for the emulator";
    return false;
  }
  return jit(*module, nullptr, path, out, error);
}
