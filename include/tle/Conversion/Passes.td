//===- Passes.td - TLE conversion passes -------------------*- tablegen -*-===//
//
// Declares every conversion pass of TLE. One file for all of them, as in
// MLIR and CIRCT, so that a reader finds the whole lowering story here.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_PASSES_TD
#define TLE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTLEToLLVM : Pass<"convert-tle-to-llvm"> {
  let summary = "Lower the tle dialect to calls of the TLE/FlagCX device ABI";
  let description = [{
    Replaces every `tle` op by one `llvm.call` of an `extern "C"` device
    function, declaring the callee as an `llvm.func` in the nearest symbol
    table (`builtin.module` or `gpu.module`) when it is not declared yet.
    All other ops are left alone (partial conversion), so the pass can run
    before `gpu-lower-to-nvvm-pipeline` or any other LLVM lowering; the same
    patterns are available to a larger lowering through
    `populateTLEToLLVMConversionPatterns`.

    `i64` communicators and buffer handles become pointers by `llvm.inttoptr`;
    pointers in a non-zero address space are cast to the generic address
    space with `llvm.addrspacecast`. Function names, signatures and the
    encodings of group, order, team and scope are listed in docs/abi.md.

    The option `abi` chooses the barrier entry points:
    - `scalar` (default): `flagcxIntraBarrier{Arrive,Wait,Sync}S(ptr comm,
      i32 coopKind, i32 index, i1 multimem, i32 order)`;
    - `unified`: `flagcxDevBarrier{Arrive,Wait,Sync}(ptr comm, i32 teamKind,
      i32 index, i32 contextId, i32 coopKind, i32 order, i32 scope)` with
      team INTRA, context 0 and scope SYSTEM. This form has no multimem
      parameter, so a `multimem` barrier is an error under it rather than
      being silently demoted.

    With either ABI, `group grid` calls TLE's own
    `tleIntraGridBarrier{Arrive,Wait,Sync}S(ptr comm, i32 index,
    i1 multimem, i32 order)`: FlagCX has no grid encoding, and its coopKind 3
    means TILE_SPAN.

    The pass must run on an op with a symbol table (usually the top-level
    module), because it adds declarations to nested symbol tables.

    Before:

    ```mlir
    gpu.func @kernel(%comm: !llvm.ptr, %index: i32) kernel {
      tle.device_intra_barrier sync %comm, %index group block order release : !llvm.ptr
      gpu.return
    }
    ```

    After (`abi=scalar`):

    ```mlir
    llvm.func @flagcxIntraBarrierSyncS(!llvm.ptr, i32, i32, i1, i32)
    gpu.func @kernel(%comm: !llvm.ptr, %index: i32) kernel {
      %coop = llvm.mlir.constant(2 : i32) : i32
      %multimem = llvm.mlir.constant(false) : i1
      %order = llvm.mlir.constant(2 : i32) : i32
      llvm.call @flagcxIntraBarrierSyncS(%comm, %coop, %index, %multimem, %order)
          : (!llvm.ptr, i32, i32, i1, i32) -> ()
      gpu.return
    }
    ```
  }];
  let options = [
    Option<"abi", "abi", "::mlir::tle::BarrierABI",
           /*default=*/"::mlir::tle::BarrierABI::Scalar",
           "Barrier entry points to call",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tle::BarrierABI::Scalar, "scalar",
                        "flagcxIntraBarrier*S (FlagCX scalar form)"),
             clEnumValN(::mlir::tle::BarrierABI::Unified, "unified",
                        "flagcxDevBarrier* (FlagCX unified form)"))}]>
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TLE_CONVERSION_PASSES_TD
