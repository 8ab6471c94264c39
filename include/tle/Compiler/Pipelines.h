//===- Pipelines.h - Compiling a kernel module to a bundle ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one compile entry point of tlec and tlerun's in-process compiler: a
// module of `gpu.func` kernels that use the `tle` dialect, and options, in;
// a bundle (code plus launch metadata) or an intermediate form out. Two
// lowerings: to PTX for NVIDIA GPUs, with the device bitcode library linked
// and internalized by MLIR's GPU serialization, and to host LLVM IR for the
// CPU emulator. Both are also registered as pass pipelines
// (`tle-cuda-pipeline`, `tle-host-pipeline`) for tle-opt.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_COMPILER_PIPELINES_H
#define TLE_COMPILER_PIPELINES_H

#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"

#include "tle/Bundle/Bundle.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace tle {

/// Where the compiled kernels run.
enum class CompileTarget {
  /// NVIDIA GPUs: PTX.
  Cuda,
  /// The CPU emulator of the TLE runtime: host code.
  Host,
};

/// How to lower a kernel module.
struct CompileOptions {
  CompileTarget target = CompileTarget::Cuda;
  /// GPU architecture for `Cuda`: sm_70 or newer (the device library uses
  /// the PTX memory model of sm_70).
  std::string arch = "sm_90";
  /// The device library bitcode linked into `Cuda` kernels; empty: none.
  std::string deviceLibrary;
  /// LLVM optimization level, 0..3.
  unsigned optLevel = 3;
  /// Which barrier entry points the tle lowering calls.
  BarrierABI abi = BarrierABI::Scalar;
  /// Barriers and signals pass their op's call-site id (the `...At` entry
  /// points) and the bundle carries the table of ids (docs/design.md,
  /// "Call sites"); false: FlagCX's entry points, no table.
  bool callSites = true;
};

/// How far compileModule goes.
enum class CompileStage {
  /// The module after the MLIR pipeline (LLVM and NVVM dialects).
  LoweredMLIR,
  /// LLVM IR: for cuda, linked with the device library and optimized.
  LLVMIR,
  /// The bundle: PTX (cuda) or host LLVM IR, with the kernels' metadata.
  Bundle,
};

/// What compileModule produced.
struct CompileResult {
  /// Always carries the kernels' metadata; target, arch, format and code
  /// are set at CompileStage::Bundle.
  ::tle::run::Bundle bundle;
  /// The text of LoweredMLIR or LLVMIR.
  std::string text;
};

/// Compiles `module` (modified in place) up to `stage`. Every failure is
/// reported as a located diagnostic; `source` names the input in the bundle.
FailureOr<CompileResult> compileModule(ModuleOp module,
                                       const CompileOptions &options,
                                       CompileStage stage,
                                       StringRef source = "");

/// Checks options before any work: `arch` is sm_70 or newer, `optLevel` is
/// 0..3. Returns a message, or "" when they are valid.
std::string validateOptions(const CompileOptions &options);

/// The device library a tool links by default: $TLE_DEVICE_BC, else
/// lib/libtle_device.bc next to the tool's bin/ folder (`argv0` and an
/// address inside the tool locate it).
std::string defaultDeviceLibrary(const char *argv0, void *addressInTool);

/// The MLIR half of each lowering, as pass pipelines.
void buildCudaPipeline(OpPassManager &pm, const CompileOptions &options);
void buildHostPipeline(OpPassManager &pm, BarrierABI abi,
                       bool callSites = true);

/// Registers every dialect, interface and translation the pipelines need.
void registerCompilerDialects(DialectRegistry &registry);

/// Registers TLE's passes, the upstream ones, and the pipelines
/// `tle-cuda-pipeline` and `tle-host-pipeline`.
void registerCompilerPasses();

} // namespace tle
} // namespace mlir

#endif // TLE_COMPILER_PIPELINES_H
