//===- TLEDialect.cpp - The tle dialect -----------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Registers the ops of the `tle` dialect and holds the generated dialect and
// enum definitions.
//
//===----------------------------------------------------------------------===//

#include "tle/Dialect/TLE/IR/TLEDialect.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tle;

#include "tle/Dialect/TLE/IR/TLEDialect.cpp.inc"
#include "tle/Dialect/TLE/IR/TLEEnums.cpp.inc"

void TLEDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tle/Dialect/TLE/IR/TLEOps.cpp.inc"
      >();
}
