//===- TLEDialect.h - The tle dialect ---------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Declares the `tle` dialect class and its enums. Include
// TLEOps.h for the ops themselves.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DIALECT_TLE_IR_TLEDIALECT_H
#define TLE_DIALECT_TLE_IR_TLEDIALECT_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
class LLVMTypeConverter;
} // namespace mlir

#include "tle/Dialect/TLE/IR/TLEDialect.h.inc"
#include "tle/Dialect/TLE/IR/TLEEnums.h.inc"

#endif // TLE_DIALECT_TLE_IR_TLEDIALECT_H
