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
    (see `--convert-tle-to-llvm` and docs/abi.md). The dialect's one piece
    of state is where MLIR's generic `--convert-to-llvm` finds those
    lowerings (`registerConvertTLEToLLVMInterface` sets it): a tool that
    never registered them fails that pass on the first tle op, naming the
    call to add, instead of leaving every tle op in place.
  }];
  // The operand types (`!llvm.ptr`) live in the LLVM dialect.
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let extraClassDeclaration = [{
    /// Adds the to-LLVM patterns of the tle ops (TLEToLLVM's, set by
    /// registerConvertTLEToLLVMInterface; null until then).
    using ToLLVMPatterns = void (*)(const ::mlir::LLVMTypeConverter &,
                                    ::mlir::RewritePatternSet &);
    ToLLVMPatterns toLLVMPatterns = nullptr;
  }];
}

#endif // TLE_DIALECT_TLE_IR_TLEDIALECT_TD
