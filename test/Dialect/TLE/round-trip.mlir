// RUN: tle-opt %s --verify-roundtrip | FileCheck %s
// RUN: tle-opt %s --mlir-print-op-generic | tle-opt | FileCheck %s

// The printed form of every op. The exhaustive barrier matrix is in
// round-trip-barrier.mlir; this file covers defaults and the other ops.

// Defaults (group block, order acq_rel) are elided whether written or not.
// CHECK-LABEL: func.func @barrier_defaults(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[INDEX:.*]]: i32)
func.func @barrier_defaults(%comm: !llvm.ptr, %index: i32) {
  // CHECK-NEXT: tle.device_intra_barrier sync %[[COMM]], %[[INDEX]] : !llvm.ptr
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr
  // CHECK-NEXT: tle.device_intra_barrier sync %[[COMM]], %[[INDEX]] : !llvm.ptr
  tle.device_intra_barrier sync %comm, %index group block order acq_rel : !llvm.ptr
  // CHECK-NEXT: tle.device_intra_barrier arrive %[[COMM]], %[[INDEX]] multimem : !llvm.ptr
  tle.device_intra_barrier arrive %comm, %index multimem : !llvm.ptr
  // CHECK-NEXT: tle.device_intra_barrier wait %[[COMM]], %[[INDEX]] group warp : !llvm.ptr
  tle.device_intra_barrier wait %comm, %index group warp : !llvm.ptr
  // CHECK-NEXT: tle.device_intra_barrier wait %[[COMM]], %[[INDEX]] order seq_cst : !llvm.ptr
  tle.device_intra_barrier wait %comm, %index order seq_cst : !llvm.ptr
  return
}

// The index is a runtime value, here derived from the block id, and the
// communicator may live in any address space.
// CHECK-LABEL: gpu.func @barrier_in_kernel(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr<1>)
gpu.module @kernels {
  gpu.func @barrier_in_kernel(%comm: !llvm.ptr<1>) kernel {
    // CHECK: %[[BID:.*]] = gpu.block_id x
    // CHECK: %[[INDEX:.*]] = arith.index_cast %[[BID]] : index to i32
    // CHECK: tle.device_intra_barrier sync %[[COMM]], %[[INDEX]] group grid : !llvm.ptr<1>
    %bid = gpu.block_id x
    %index = arith.index_cast %bid : index to i32
    tle.device_intra_barrier sync %comm, %index group grid : !llvm.ptr<1>
    gpu.return
  }
}

// A constant index is fine when it is not negative; unknown attributes are
// kept in the attribute dictionary.
// CHECK-LABEL: llvm.func @barrier_constant_index(
// CHECK-SAME: %[[COMM:.*]]: i64)
llvm.func @barrier_constant_index(%comm: i64) {
  // CHECK: %[[C0:.*]] = llvm.mlir.constant(0 : i32) : i32
  // CHECK: tle.device_intra_barrier sync %[[COMM]], %[[C0]] {note = "x"} : i64
  %c0 = llvm.mlir.constant(0 : i32) : i32
  tle.device_intra_barrier sync %comm, %c0 {note = "x"} : i64
  llvm.return
}

// CHECK-LABEL: func.func @queries(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[P1:.*]]: !llvm.ptr<1>, %[[RAW:.*]]: i64)
func.func @queries(%p: !llvm.ptr, %p1: !llvm.ptr<1>, %raw: i64) -> (i32, i32, i32, i32, i32, i32) {
  // CHECK-NEXT: %[[R0:.*]] = tle.intra_rank %[[P]] : !llvm.ptr
  // CHECK-NEXT: %[[R1:.*]] = tle.intra_rank %[[P1]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[R2:.*]] = tle.intra_rank %[[RAW]] : i64
  // CHECK-NEXT: %[[S0:.*]] = tle.intra_size %[[P]] : !llvm.ptr
  // CHECK-NEXT: %[[S1:.*]] = tle.intra_size %[[P1]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[S2:.*]] = tle.intra_size %[[RAW]] : i64
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[S0]], %[[S1]], %[[S2]]
  %r0 = tle.intra_rank %p : !llvm.ptr
  %r1 = tle.intra_rank %p1 : !llvm.ptr<1>
  %r2 = tle.intra_rank %raw : i64
  %s0 = tle.intra_size %p : !llvm.ptr
  %s1 = tle.intra_size %p1 : !llvm.ptr<1>
  %s2 = tle.intra_size %raw : i64
  return %r0, %r1, %r2, %s0, %s1, %s2 : i32, i32, i32, i32, i32, i32
}

// The pointers are generic (address space 0) whatever the handle's type.
// CHECK-LABEL: func.func @pointers(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[P1:.*]]: !llvm.ptr<1>, %[[RAW:.*]]: i64, %[[OFF:.*]]: i64, %[[PEER:.*]]: i32)
func.func @pointers(%p: !llvm.ptr, %p1: !llvm.ptr<1>, %raw: i64, %off: i64, %peer: i32) -> (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) {
  // CHECK-NEXT: %[[L0:.*]] = tle.local_pointer %[[P]], %[[OFF]] : !llvm.ptr
  // CHECK-NEXT: %[[L1:.*]] = tle.local_pointer %[[P1]], %[[OFF]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[L2:.*]] = tle.local_pointer %[[RAW]], %[[OFF]] : i64
  // CHECK-NEXT: %[[I0:.*]] = tle.intra_pointer %[[P]], %[[OFF]], %[[PEER]] : !llvm.ptr
  // CHECK-NEXT: %[[I1:.*]] = tle.intra_pointer %[[P1]], %[[OFF]], %[[PEER]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[I2:.*]] = tle.intra_pointer %[[RAW]], %[[OFF]], %[[PEER]] : i64
  // CHECK-NEXT: return %[[L0]], %[[L1]], %[[L2]], %[[I0]], %[[I1]], %[[I2]] : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr
  %l0 = tle.local_pointer %p, %off : !llvm.ptr
  %l1 = tle.local_pointer %p1, %off : !llvm.ptr<1>
  %l2 = tle.local_pointer %raw, %off : i64
  %i0 = tle.intra_pointer %p, %off, %peer : !llvm.ptr
  %i1 = tle.intra_pointer %p1, %off, %peer : !llvm.ptr<1>
  %i2 = tle.intra_pointer %raw, %off, %peer : i64
  return %l0, %l1, %l2, %i0, %i1, %i2 : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr
}
