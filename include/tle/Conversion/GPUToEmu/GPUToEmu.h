//===- GPUToEmu.h - Kernel modules for the CPU emulator ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Names and helpers of the host lowering (the passes are declared in
// tle/Conversion/Passes.h): the reserved symbol namespace, the attributes
// tle-flatten-gpu-modules leaves for tle-emu-entry-points, and the spelling
// of kernel parameter types shared with the bundle metadata.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_GPUTOEMU_GPUTOEMU_H
#define TLE_CONVERSION_GPUTOEMU_GPUTOEMU_H

#include "tle/abi.h"

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tle {

/// Every symbol the host lowering generates starts with this; a kernel
/// module may not define one.
inline constexpr StringLiteral kReservedPrefix = ::tle::abi::kReservedPrefix;
/// The kernel `NAME`'s body is `__tle_kernel.NAME`.
inline constexpr StringLiteral kKernelBodyPrefix = "__tle_kernel.";
/// Its packed entry (`void (void **args)`) and its parameter list.
inline constexpr StringLiteral kEntryPrefix = ::tle::abi::kEmuEntryPrefix;
inline constexpr StringLiteral kParamsPrefix = ::tle::abi::kEmuParamsPrefix;
/// tle-emu-instrument's source-location strings: `__tle_site.N`.
inline constexpr StringLiteral kSitePrefix = "__tle_site.";
/// On a flattened kernel body: the kernel's name and its parameter types.
inline constexpr StringLiteral kEmuKernelAttr = "tle.emu_kernel";
inline constexpr StringLiteral kEmuParamsAttr = "tle.emu_params";

/// The bundle's spelling of a kernel parameter type (ptr, i1, i8, i16, i32,
/// i64, f16, f32, f64, index), or "" if a launcher cannot pass it.
std::string spellKernelParamType(Type type);

} // namespace mlir::tle

#endif // TLE_CONVERSION_GPUTOEMU_GPUTOEMU_H
