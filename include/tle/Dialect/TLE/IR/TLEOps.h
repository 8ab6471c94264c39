//===- TLEOps.h - Operations of the tle dialect -----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Declares the ops of the `tle` dialect (the barriers, rank and size queries,
// pointers and signals), generated from TLEOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DIALECT_TLE_IR_TLEOPS_H
#define TLE_DIALECT_TLE_IR_TLEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tle/Dialect/TLE/IR/TLEDialect.h"

#define GET_OP_CLASSES
#include "tle/Dialect/TLE/IR/TLEOps.h.inc"

#endif // TLE_DIALECT_TLE_IR_TLEOPS_H
