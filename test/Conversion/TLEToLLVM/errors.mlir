// RUN: tle-opt %s --split-input-file --convert-tle-to-llvm=abi=unified \
// RUN:   --verify-diagnostics
// RUN: not tle-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-tle-to-llvm))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ANCHOR

// The unified ABI has no multimem parameter: a multimem barrier is an error
// rather than being silently demoted to unicast.
func.func @unified_multimem(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{multimem is not expressible in the unified ABI; use abi=scalar}}
  // expected-error @below {{failed to legalize operation 'tle.device_intra_barrier'}}
  tle.device_intra_barrier sync %comm, %index group warp multimem : !llvm.ptr
  return
}

// -----

// A callee declared with another signature is not silently redeclared.
// expected-error @below {{redefinition of function 'flagcxDevCommGetIntraRank' of different type '!llvm.func<i32 (ptr)>' is prohibited}}
llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i64
func.func @mismatched_declaration(%comm: !llvm.ptr) -> i32 {
  // expected-error @below {{failed to legalize operation 'tle.intra_rank'}}
  %r = tle.intra_rank %comm : !llvm.ptr
  return %r : i32
}

// Anchored on a function, the pass could not add declarations to the module
// without racing other functions' pass instances; it refuses.
// ANCHOR: convert-tle-to-llvm must run on an op with a symbol table
