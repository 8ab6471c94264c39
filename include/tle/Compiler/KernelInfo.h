//===- KernelInfo.h - What a launcher must know about a kernel --*- C++ -*-===//
//
// The metadata tlec writes into a bundle next to the code, read from the
// kernel module before lowering: kernel names and parameter types, whether a
// co-resident (cooperative) launch is needed because of a `group grid`
// barrier, and how many barrier slots the kernel's constant indices need.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_COMPILER_KERNELINFO_H
#define TLE_COMPILER_KERNELINFO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tle {

/// Launch metadata of one `gpu.func ... kernel`.
struct KernelInfo {
  std::string name;
  /// Parameter types as the bundle spells them: ptr, i1, i8, i16, i32, i64,
  /// f16, f32, f64, index.
  std::vector<std::string> paramTypes;
  /// A `group grid` barrier needs every block of the grid resident at once.
  bool cooperative = false;
  /// Slots the barriers need: max constant index + 1; unset when an index is
  /// not a constant ("runtime": the launcher decides).
  std::optional<unsigned> barrierSlots;
  /// Number of `tle.device_intra_barrier` ops in the kernel.
  unsigned barrierOps = 0;
};

/// Collects the metadata of every kernel in the gpu.modules of `module`.
/// Fails, with a located diagnostic, on an unsupported parameter type or a
/// duplicate kernel name; a module without kernels is an error too.
FailureOr<std::vector<KernelInfo>> collectKernelInfo(ModuleOp module);

} // namespace mlir::tle

#endif // TLE_COMPILER_KERNELINFO_H
