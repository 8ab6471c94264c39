// RUN: tle-opt %s --convert-tle-to-llvm | FileCheck %s
// RUN: tle-opt %s --convert-tle-to-llvm=abi=unified | FileCheck %s

// The session ops call TLE's own entry points under either ABI (FlagCX has
// no sessions): (comm, coopKind, index) for the open, (comm, coopKind,
// index, order, epoch) -> next epoch for each half, (comm, coopKind,
// index, epoch) for the close.

// CHECK-DAG: llvm.func @tleIntraBarrierSessionOpen(!llvm.ptr, i32, i32) -> i32
// CHECK-DAG: llvm.func @tleIntraBarrierSessionArrive(!llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG: llvm.func @tleIntraBarrierSessionWait(!llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG: llvm.func @tleIntraBarrierSessionSync(!llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG: llvm.func @tleIntraBarrierSessionClose(!llvm.ptr, i32, i32, i32)
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[SLOT:.*]]: i32)
// (group warp 1)
// CHECK-NEXT: %[[W0:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[E0:.*]] = llvm.call @tleIntraBarrierSessionOpen(%[[COMM]], %[[W0]], %[[SLOT]])
// (group warp 1, release 2)
// CHECK-NEXT: %[[W1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[REL:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[E1:.*]] = llvm.call @tleIntraBarrierSessionArrive(%[[COMM]], %[[W1]], %[[SLOT]], %[[REL]], %[[E0]])
// (group warp 1, acquire 1)
// CHECK-NEXT: %[[W2:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[ACQ:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[E2:.*]] = llvm.call @tleIntraBarrierSessionWait(%[[COMM]], %[[W2]], %[[SLOT]], %[[ACQ]], %[[E1]])
// (group warp 1, seq_cst 4)
// CHECK-NEXT: %[[W3:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[SEQ:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[E3:.*]] = llvm.call @tleIntraBarrierSessionSync(%[[COMM]], %[[W3]], %[[SLOT]], %[[SEQ]], %[[E2]])
// CHECK-NEXT: %[[W4:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.call @tleIntraBarrierSessionClose(%[[COMM]], %[[W4]], %[[SLOT]], %[[E3]])
llvm.func @k(%comm: !llvm.ptr, %slot: i32) {
  %e0 = tle.session_open %comm, %slot group warp : !llvm.ptr
  %e1 = tle.session_barrier arrive %comm, %slot, %e0 group warp order release : !llvm.ptr
  %e2 = tle.session_barrier wait %comm, %slot, %e1 group warp order acquire : !llvm.ptr
  %e3 = tle.session_barrier sync %comm, %slot, %e2 group warp order seq_cst : !llvm.ptr
  tle.session_close %comm, %slot, %e3 group warp : !llvm.ptr
  llvm.return
}
