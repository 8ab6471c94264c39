//===- Passes.h - TLE conversion passes -------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Declares the TLE conversion passes and their registration, generated from
// Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_PASSES_H
#define TLE_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"
#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"

namespace mlir::tle {

#define GEN_PASS_DECL
#include "tle/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tle/Conversion/Passes.h.inc"

} // namespace mlir::tle

#endif // TLE_CONVERSION_PASSES_H
