//===- tlec.cpp - The TLE kernel compiler
//----------------------------------===//
//
// Compiles an MLIR module of `gpu.func` kernels that use the `tle` dialect
// to PTX for NVIDIA GPUs (the device library linked in) or to host code for
// the CPU emulator, and writes either the code alone (--emit=mlir|llvm|ptx)
// or a bundle, the code plus the launch metadata tlerun needs.
//
//===----------------------------------------------------------------------===//

#include "../tlerun/Bundle.h"
#include "tle/Compiler/KernelInfo.h"
#include "tle/Compiler/Pipelines.h"
#include "tle/tle.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { MLIR, LLVM, PTX, Bundle };
} // namespace

static cl::OptionCategory category("tlec options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<kernel.mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o",
                                       cl::desc("Output file (- for stdout)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<mlir::tle::CompileTarget>
    target("target", cl::desc("Where the kernels run"),
           cl::values(clEnumValN(mlir::tle::CompileTarget::Cuda, "cuda",
                                 "NVIDIA GPUs (PTX)"),
                      clEnumValN(mlir::tle::CompileTarget::Host, "host",
                                 "the CPU emulator (host LLVM IR)")),
           cl::init(mlir::tle::CompileTarget::Cuda), cl::cat(category));
static cl::opt<std::string> arch("arch", cl::desc("GPU architecture"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<Emit>
    emit("emit", cl::desc("What to write"),
         cl::values(clEnumValN(Emit::MLIR, "mlir",
                               "the lowered MLIR (LLVM dialect)"),
                    clEnumValN(Emit::LLVM, "llvm",
                               "LLVM IR (cuda: linked and optimized)"),
                    clEnumValN(Emit::PTX, "ptx", "PTX (cuda only)"),
                    clEnumValN(Emit::Bundle, "bundle",
                               "code and launch metadata for tlerun")),
         cl::init(Emit::Bundle), cl::cat(category));
static cl::opt<std::string>
    deviceLib("device-lib",
              cl::desc("Device library bitcode linked into cuda kernels "
                       "(default: $TLE_DEVICE_BC, else "
                       "<tlec dir>/../lib/libtle_device.bc)"),
              cl::value_desc("file.bc"), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0-3"),
                                  cl::Prefix, cl::init(3), cl::cat(category));
static cl::opt<mlir::tle::BarrierABI>
    abi("abi", cl::desc("Barrier entry points the tle ops call"),
        cl::values(clEnumValN(mlir::tle::BarrierABI::Scalar, "scalar",
                              "flagcxIntraBarrier*S"),
                   clEnumValN(mlir::tle::BarrierABI::Unified, "unified",
                              "flagcxDevBarrier*")),
        cl::init(mlir::tle::BarrierABI::Scalar), cl::cat(category));

/// The device library tlec links by default, next to the build's lib/.
static std::string defaultDeviceLib(const char *argv0) {
  if (const char *env = std::getenv("TLE_DEVICE_BC"))
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultDeviceLib));
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "libtle_device.bc");
  return std::string(path);
}

static void printVersion(llvm::raw_ostream &os) {
  os << "tlec (TLE) " << TLE_VERSION_MAJOR << "." << TLE_VERSION_MINOR
     << "\n  LLVM/MLIR " << LLVM_VERSION_STRING << ", bundle format "
     << ::tle::run::kBundleVersion << "\n";
}

/// Compiles the module; writes what --emit asks into `out`.
static LogicalResult compile(ModuleOp module,
                             const mlir::tle::CompileOptions &options,
                             std::string &out) {
  FailureOr<std::vector<mlir::tle::KernelInfo>> kernels =
      mlir::tle::collectKernelInfo(module);
  if (failed(kernels))
    return failure();

  ::tle::run::Bundle bundle;
  bundle.source = inputFile;
  for (const mlir::tle::KernelInfo &info : *kernels)
    bundle.kernels.push_back({info.name, info.paramTypes, info.cooperative,
                              info.barrierSlots, info.barrierOps});

  if (options.target == mlir::tle::CompileTarget::Cuda) {
    if (failed(mlir::tle::lowerToNVVM(module, options)))
      return failure();
    if (emit == Emit::MLIR) {
      llvm::raw_string_ostream os(out);
      module.print(os);
      return success();
    }
    FailureOr<mlir::tle::CudaArtifacts> artifacts =
        mlir::tle::serializeToPTX(module, options);
    if (failed(artifacts))
      return failure();
    if (emit == Emit::LLVM)
      out = artifacts->optimizedLLVM;
    else if (emit == Emit::PTX)
      out = artifacts->ptx;
    else {
      bundle.target = "cuda";
      bundle.arch = options.arch;
      bundle.format = "ptx";
      bundle.code = artifacts->ptx;
      out = ::tle::run::writeBundle(bundle);
    }
    return success();
  }

  if (emit == Emit::PTX)
    return module.emitError("--emit=ptx needs --target=cuda");
  if (failed(mlir::tle::lowerToHost(module, options)))
    return failure();
  if (emit == Emit::MLIR) {
    llvm::raw_string_ostream os(out);
    module.print(os);
    return success();
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::tle::translateHostModule(module, llvmContext);
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(llvm::Triple(llvm::sys::getProcessTriple()));
  mlir::tle::optimizeHostModule(*llvmModule, options.optLevel);
  std::string ir;
  llvm::raw_string_ostream os(ir);
  llvmModule->print(os, nullptr);
  if (emit == Emit::LLVM) {
    out = std::move(ir);
    return success();
  }
  bundle.target = "host";
  bundle.arch = llvm::sys::getProcessTriple();
  bundle.format = "llvm";
  bundle.code = std::move(ir);
  out = ::tle::run::writeBundle(bundle);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::tle::registerCompilerPasses();
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tlec: compile gpu.func kernels using the tle dialect to PTX (cuda) or "
      "to host code for the CPU emulator (host)\n\n"
      "Kernels take (%comm: !llvm.ptr, %mem0: !llvm.ptr, ...): the device "
      "communicator, then one symmetric-buffer handle per tlerun --buffer.\n");

  if (optLevel > 3) {
    llvm::errs() << "tlec: -O" << optLevel << " is out of range (0-3)\n";
    return 1;
  }
  mlir::tle::CompileOptions options;
  options.target = target;
  options.arch = arch;
  options.optLevel = optLevel;
  options.abi = abi;
  if (target == mlir::tle::CompileTarget::Cuda && emit != Emit::MLIR) {
    options.deviceLibrary =
        deviceLib.empty() ? defaultDeviceLib(argv[0]) : std::string(deviceLib);
    if (!llvm::sys::fs::exists(options.deviceLibrary)) {
      llvm::errs() << "tlec: device library '" << options.deviceLibrary
                   << "' not found (build target tle_device_bc, or pass "
                      "--device-lib)\n";
      return 1;
    }
  }

  DialectRegistry registry;
  mlir::tle::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // A located one-line error is the interface; the op dump is noise.
  context.printOpOnDiagnostic(false);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "tlec: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  std::string out;
  if (failed(compile(*module, options, out)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "tlec: " << errorMessage << "\n";
    return 1;
  }
  output->os() << out;
  output->keep();
  return 0;
}
