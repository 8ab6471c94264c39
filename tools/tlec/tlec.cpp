//===- tlec.cpp - The TLE kernel compiler ---------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiles an MLIR module of `gpu.func` kernels that use the `tle` dialect
// to PTX for NVIDIA GPUs (the device library linked in) or to host code for
// the CPU emulator, and writes either an intermediate form
// (--emit=mlir|llvm|ptx) or a bundle, the code plus the launch metadata
// tlerun needs. The work is mlir::tle::compileModule's; this file is the
// command line.
//
//===----------------------------------------------------------------------===//

#include "tle/Bundle/Bundle.h"
#include "tle/Compiler/Pipelines.h"
#include "tle/version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

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
static cl::opt<std::string> arch("arch",
                                 cl::desc("GPU architecture, sm_70 or newer"),
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

static cl::opt<bool> callSites(
    "call-sites",
    cl::desc("Barriers and signals pass their op's call-site id, and the "
             "bundle carries the table of ids (default true)"),
    cl::init(true), cl::cat(category));

static void printVersion(llvm::raw_ostream &os) {
  os << "tlec (TLE) " << TLE_VERSION_STRING << "\n  LLVM/MLIR "
     << LLVM_VERSION_STRING << ", bundle format " << ::tle::run::kBundleVersion
     << "\n";
}

/// Exit statuses: 2 for a usage error, 1 for everything else that fails.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

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

  mlir::tle::CompileOptions options;
  options.target = target;
  options.arch = arch;
  options.optLevel = optLevel;
  options.abi = abi;
  options.callSites = callSites;
  std::string invalid = mlir::tle::validateOptions(options);
  if (!invalid.empty()) {
    llvm::errs() << "tlec: " << invalid << "\n";
    return kExitUsage;
  }
  if (emit == Emit::PTX && target != mlir::tle::CompileTarget::Cuda) {
    llvm::errs() << "tlec: --emit=ptx needs --target=cuda\n";
    return kExitUsage;
  }
  if (!deviceLib.empty() && target != mlir::tle::CompileTarget::Cuda) {
    // Host code calls the emulator's build of the device library, inside
    // libtle: a library given here would be ignored.
    llvm::errs() << "tlec: --device-lib applies to --target=cuda only (host "
                    "kernels call the device library built into libtle)\n";
    return kExitUsage;
  }
  if (target == mlir::tle::CompileTarget::Cuda && emit != Emit::MLIR) {
    options.deviceLibrary =
        deviceLib.empty()
            ? mlir::tle::defaultDeviceLibrary(
                  argv[0], reinterpret_cast<void *>(&printVersion))
            : std::string(deviceLib);
    if (!llvm::sys::fs::exists(options.deviceLibrary)) {
      llvm::errs() << "tlec: device library '" << options.deviceLibrary
                   << "' not found (build target tle_device_bc, or pass "
                      "--device-lib)\n";
      return kExitFailure;
    }
  }

  DialectRegistry registry;
  mlir::tle::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // A located one-line error is the interface; the op dump is noise.
  context.printOpOnDiagnostic(false);

  std::string errorMessage, text;
  // Bounded (an endless stream or a FIFO without a writer is an error, not
  // an out-of-memory abort or a hang).
  if (!::tle::run::readInputFile(inputFile, text, errorMessage)) {
    llvm::errs() << "tlec: " << errorMessage << "\n";
    return kExitFailure;
  }
  std::unique_ptr<llvm::MemoryBuffer> input =
      llvm::MemoryBuffer::getMemBufferCopy(
          text, inputFile == "-" ? "<stdin>" : inputFile.getValue());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return kExitFailure;

  mlir::tle::CompileStage stage =
      emit == Emit::MLIR   ? mlir::tle::CompileStage::LoweredMLIR
      : emit == Emit::LLVM ? mlir::tle::CompileStage::LLVMIR
                           : mlir::tle::CompileStage::Bundle;
  FailureOr<mlir::tle::CompileResult> result =
      mlir::tle::compileModule(*module, options, stage, inputFile);
  if (failed(result))
    return kExitFailure;
  std::string out;
  if (emit == Emit::PTX)
    out = std::move(result->bundle.code);
  else if (emit == Emit::Bundle) {
    std::string error;
    if (!::tle::run::writeBundle(result->bundle, out, error)) {
      llvm::errs() << "tlec: cannot write the bundle: " << error << "\n";
      return kExitFailure;
    }
  } else
    out = std::move(result->text);

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "tlec: " << errorMessage << "\n";
    return kExitFailure;
  }
  output->os() << out;
  output->keep();
  return 0;
}
