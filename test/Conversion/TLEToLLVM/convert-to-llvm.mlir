// RUN: tle-opt %s --convert-to-llvm | FileCheck %s

// MLIR's generic --convert-to-llvm lowers tle ops through the dialect's
// ConvertToLLVMPatternInterface, with the scalar ABI (the default of
// --convert-tle-to-llvm), alongside the ops of other dialects.

// CHECK-NOT: tle.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[IDX:.*]]: i32, %[[MEM:.*]]: i64)
llvm.func @kernel(%comm: !llvm.ptr, %idx: i32, %mem: i64) {
  // CHECK-DAG: %[[RELEASE:.*]] = llvm.mlir.constant(2 : i32) : i32
  // CHECK-DAG: %[[WARP:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @flagcxIntraBarrierSyncS(%[[COMM]], %[[WARP]], %[[IDX]], %{{.*}}, %[[RELEASE]])
  tle.device_intra_barrier sync %comm, %idx group warp order release : !llvm.ptr
  // CHECK: llvm.call @tleIntraGridBarrierWaitS(%[[COMM]], %[[IDX]], %{{.*}}, %{{.*}})
  tle.device_intra_barrier wait %comm, %idx group grid : !llvm.ptr
  // CHECK: %[[RANK:.*]] = llvm.call @flagcxDevCommGetIntraRank(%[[COMM]])
  %r = tle.intra_rank %comm : !llvm.ptr
  // CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : i64) : i64
  %c8 = arith.constant 8 : i64
  // CHECK: %[[HANDLE:.*]] = llvm.inttoptr %[[MEM]] : i64 to !llvm.ptr
  // CHECK: llvm.call @flagcxGetIntraPointerS(%[[HANDLE]], %[[C8]], %[[RANK]])
  %p = tle.intra_pointer %mem, %c8, %r : i64
  llvm.return
}
