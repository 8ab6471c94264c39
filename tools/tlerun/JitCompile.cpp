//===- JitCompile.cpp - tlerun's in-process compiler ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// With the compiler built, tlerun takes MLIR directly: it compiles the
// module with mlir::tle::compileModule, exactly as tlec would bundle it,
// and then runs the bundle's code. Host code (LLVM IR, from MLIR or from a
// host bundle) is JIT-compiled with MLIR's ExecutionEngine (ORC); the JIT
// resolves the emulator hooks and the host build of the device library from
// libtle.so, which tlerun links. A kernel's entry is looked up only among
// the code's own definitions, under the reserved name tle/abi.h gives it,
// and its parameter list in the code must match the bundle's metadata.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "tle/Compiler/Pipelines.h"
#include "tle/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using ::tle::run::Bundle;
using ::tle::run::BundleKernel;
using ::tle::run::LoadedKernel;
using ::tle::run::Options;

bool ::tle::run::haveCompiler() { return true; }

static void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::tle::registerCompilerPasses();
    // The process's own symbols (libtle's device library and hooks, which
    // tlerun links), for checkCallees; the JIT resolves from them too.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently(nullptr);
  });
}

/// Checks that `module` defines the packed entry of `meta` and a parameter
/// list equal to the metadata's, so that a bundle whose metadata lies about
/// its code is refused instead of launched with the wrong arguments.
static bool checkHostCode(const llvm::Module &module, const BundleKernel &meta,
                          std::string &error) {
  std::string entryName = ::tle::abi::kEmuEntryPrefix + meta.name;
  const llvm::Function *entry = module.getFunction(entryName);
  if (!entry || entry->isDeclaration()) {
    error = "the code does not define kernel '" + meta.name + "' (no " +
            entryName + ")";
    return false;
  }
  std::string paramsName = ::tle::abi::kEmuParamsPrefix + meta.name;
  const llvm::GlobalVariable *params = module.getNamedGlobal(paramsName);
  auto *init = params && params->hasInitializer()
                   ? dyn_cast<llvm::ConstantDataArray>(params->getInitializer())
                   : nullptr;
  if (!init || !init->isCString()) {
    error = "the code lacks the parameter list of kernel '" + meta.name + "'";
    return false;
  }
  std::string inCode = init->getAsCString().str();
  std::string inMeta = ::tle::run::joinParams(meta.params);
  if (inCode != inMeta) {
    error = "kernel '" + meta.name + "' takes (" + inCode +
            ") in its code but the bundle's metadata says (" + inMeta + ")";
    return false;
  }
  return true;
}

/// Checks that every function the code calls but does not define is one the
/// JIT can resolve from this process (the device library and emulator hooks
/// of libtle, the C library), so that a kernel calling a device function
/// TLE does not define gets its name and its caller, not the JIT's
/// "Symbols not found" followed by "kernel entry not found". (The callers
/// are the kernel's own code, whose functions carry reserved names.)
static bool checkCallees(const llvm::Module &module, const BundleKernel &meta,
                         std::string &error) {
  std::string missing;
  for (const llvm::Function &f : module) {
    if (!f.isDeclaration() || f.isIntrinsic() || f.use_empty())
      continue;
    std::string name = f.getName().str();
    if (llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name))
      continue;
    missing += (missing.empty() ? "" : ", ") + name;
  }
  if (missing.empty())
    return true;
  error = "kernel '" + meta.name +
          "' calls device functions that neither its code nor TLE's device "
          "library defines: " +
          missing +
          ". TLE's library defines the entry points of docs/abi.md "
          "(FlagCX's 148 public symbols among them); is this a function of "
          "another library, or a misspelled name?";
  return false;
}

/// JIT-compiles host LLVM IR `ir` and looks up the kernel's packed entry.
static bool jit(const std::string &ir, const std::string &path,
                LoadedKernel &out, std::string &error) {
  MLIRContext context;
  context.loadDialect<LLVM::LLVMDialect>();
  OwningOpRef<ModuleOp> empty = ModuleOp::create(UnknownLoc::get(&context));
  std::string parseError;
  bool codeOk = true;
  auto builder =
      [&](Operation *,
          llvm::LLVMContext &llvmContext) -> std::unique_ptr<llvm::Module> {
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> parsed =
        llvm::parseIR(llvm::MemoryBufferRef(ir, path), diag, llvmContext);
    if (!parsed) {
      llvm::raw_string_ostream os(parseError);
      diag.print("tlerun", os);
      return nullptr;
    }
    if (!checkHostCode(*parsed, out.meta, parseError) ||
        !checkCallees(*parsed, out.meta, parseError)) {
      codeOk = false;
      return nullptr;
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
      ExecutionEngine::create(*empty, engineOptions);
  if (!engine) {
    llvm::consumeError(engine.takeError());
    error = codeOk ? "JIT compilation failed: " + parseError : parseError;
    return false;
  }
  llvm::Expected<void *> entry =
      (*engine)->lookup(::tle::abi::kEmuEntryPrefix + out.meta.name);
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
  if (hostBundle) {
    out.meta = *hostBundle->findKernel(options.kernel);
    return jit(source, path, out, error);
  }

  DialectRegistry registry;
  mlir::tle::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // A located one-line error is the interface; the op dump is noise.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, path), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, llvm::errs());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    error = "cannot parse '" + path + "'";
    return false;
  }

  mlir::tle::CompileOptions compileOptions;
  compileOptions.target = options.target == "cuda"
                              ? mlir::tle::CompileTarget::Cuda
                              : mlir::tle::CompileTarget::Host;
  if (compileOptions.target == mlir::tle::CompileTarget::Cuda) {
    compileOptions.deviceLibrary =
        options.deviceLib.empty()
            ? mlir::tle::defaultDeviceLibrary(
                  "tlerun", reinterpret_cast<void *>(&initializeOnce))
            : options.deviceLib;
    if (!llvm::sys::fs::exists(compileOptions.deviceLibrary)) {
      error = "device library '" + compileOptions.deviceLibrary +
              "' not found (pass --device-lib)";
      return false;
    }
  }
  FailureOr<mlir::tle::CompileResult> result = mlir::tle::compileModule(
      *module, compileOptions, mlir::tle::CompileStage::Bundle, path);
  if (failed(result)) {
    error = "cannot compile '" + path + "' for " + options.target;
    return false;
  }
  registerSites(result->bundle);
  const BundleKernel *meta = result->bundle.findKernel(options.kernel);
  if (!meta) {
    error = "no kernel '" + options.kernel + "' in '" + path + "' (it has:";
    for (const BundleKernel &kernel : result->bundle.kernels)
      error += " " + kernel.name;
    error += ")";
    return false;
  }
  out.meta = *meta;
  if (compileOptions.target == mlir::tle::CompileTarget::Cuda) {
    out.ptx = std::move(result->bundle.code);
    return true;
  }
  return jit(result->bundle.code, path, out, error);
}
