//===- Pipelines.h - tlec's lowerings of a kernel module --------*- C++ -*-===//
//
// The two ways tlec (and tlerun's in-process compiler) lower a module of
// `gpu.func` kernels that use the `tle` dialect: to PTX for NVIDIA GPUs, with
// the device bitcode library linked and internalized by MLIR's GPU
// serialization machinery, and to host LLVM IR for the CPU emulator, where
// thread ids and block barriers become calls of the emulator's hooks.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_COMPILER_PIPELINES_H
#define TLE_COMPILER_PIPELINES_H

#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;

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
  /// GPU architecture for `Cuda`.
  std::string arch = "sm_90";
  /// The device library bitcode linked into `Cuda` kernels; empty: none.
  std::string deviceLibrary;
  /// LLVM optimization level, 0..3.
  unsigned optLevel = 3;
  /// Which barrier entry points the tle lowering calls.
  BarrierABI abi = BarrierABI::Scalar;
};

/// Registers every dialect, interface and translation the pipelines need.
void registerCompilerDialects(DialectRegistry &registry);

/// Registers the passes the pipelines name in their textual form.
void registerCompilerPasses();

/// Lowers every `gpu.module` of `module` to the LLVM and NVVM dialects and
/// attaches an NVVM target that links `options.deviceLibrary`. The result is
/// what `serializeToPTX` consumes.
LogicalResult lowerToNVVM(ModuleOp module, const CompileOptions &options);

/// The output of serializing lowered `gpu.module`s.
struct CudaArtifacts {
  /// PTX of every gpu.module, concatenated (tlec accepts one).
  std::string ptx;
  /// The LLVM IR after linking the device library and optimizing.
  std::string optimizedLLVM;
};

/// Runs MLIR's GPU serialization (the machinery of `gpu-module-to-binary
/// format=isa`) on a module produced by `lowerToNVVM`: translation to LLVM
/// IR, bitcode linking (only the needed functions, then internalized),
/// optimization and PTX emission.
FailureOr<CudaArtifacts> serializeToPTX(ModuleOp module,
                                        const CompileOptions &options);

/// Lowers the kernels of `module` for the CPU emulator, in the LLVM dialect:
/// the gpu.modules are flattened into `module`, gpu ids and `gpu.barrier`
/// become emulator hooks (tle/detail/EmuHooks.h), and each kernel `NAME`
/// becomes `void NAME(void **args)` calling `__tle_kernel_NAME` with
/// `*args[i]` as its i-th parameter, the convention of `tleEmuLaunch`. Ops
/// without a host meaning (inline assembly, NVVM ops) are reported at their
/// location and the lowering fails.
LogicalResult lowerToHost(ModuleOp module, const CompileOptions &options);

/// Translates a module produced by `lowerToHost` to LLVM IR for the host,
/// adding the host C calling convention's `zeroext` on `i1` parameters of
/// external calls (the device ABI's `bool multimem`).
std::unique_ptr<llvm::Module> translateHostModule(ModuleOp module,
                                                  llvm::LLVMContext &context);

/// Runs LLVM's default optimization pipeline at `optLevel` on a host module.
void optimizeHostModule(llvm::Module &module, unsigned optLevel);

} // namespace tle
} // namespace mlir

#endif // TLE_COMPILER_PIPELINES_H
