//===- TLEDialect.td - The tle dialect ---------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Declares the `tle` dialect: device-side intra-node synchronization for GPU
// kernels. The ops here are lowered by `--convert-tle-to-llvm` to calls of
// the device ABI described in docs/abi.md.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DIALECT_TLE_IR_TLEDIALECT_TD
#define TLE_DIALECT_TLE_IR_TLEDIALECT_TD

include "mlir/IR/OpBase.td"

def TLE_Dialect : Dialect {
  let name = "tle";
  let cppNamespace = "::mlir::tle";
  let summary = "Device-side intra-node barrier and its companions";
  let description = [{
    The `tle` dialect lets a GPU kernel synchronize with the other GPUs of the
    same node from inside the kernel, and, through teams (`intra`: the
    node's ranks, `inter`: the same local rank on every node, `world`:
    every rank), with the GPUs of other nodes. Its ops take the device
    communicator (an `!llvm.ptr` or a raw `i64` address) as an ordinary SSA
    value, so a kernel compiled once works with every communicator it is
    launched with.

    Every op lowers to exactly one call of an `extern "C"` device function
    (see `--convert-tle-to-llvm` and docs/abi.md); the dialect carries no
    state of its own.
  }];
  // The operand types (`!llvm.ptr`) live in the LLVM dialect.
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TLE_DIALECT_TLE_IR_TLEDIALECT_TD
