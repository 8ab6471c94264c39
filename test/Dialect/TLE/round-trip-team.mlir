// RUN: tle-opt %s --verify-roundtrip | FileCheck %s
// RUN: tle-opt %s --mlir-print-op-generic | tle-opt | FileCheck %s
// RUN: tle-opt %s --cse --canonicalize | FileCheck %s

// The printed form of the team ops: tle.device_barrier with every team (the
// team is required and always printed; group and order defaults elided as
// for tle.device_intra_barrier), tle.signal's team printed only when it is
// not intra, and the team queries. Two queries of one team are not merged
// with each other's team, nor dropped (they read the communicator).

// CHECK-LABEL: func.func @device_barrier(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[RAW:.*]]: i64, %[[INDEX:.*]]: i32)
func.func @device_barrier(%comm: !llvm.ptr, %raw: i64, %index: i32) {
  // CHECK-NEXT: tle.device_barrier sync %[[COMM]], %[[INDEX]] team intra : !llvm.ptr
  tle.device_barrier sync %comm, %index team intra : !llvm.ptr
  // CHECK-NEXT: tle.device_barrier sync %[[COMM]], %[[INDEX]] team inter : !llvm.ptr
  tle.device_barrier sync %comm, %index team inter group block order acq_rel : !llvm.ptr
  // CHECK-NEXT: tle.device_barrier arrive %[[RAW]], %[[INDEX]] team world group warp order release : i64
  tle.device_barrier arrive %raw, %index team world group warp order release : i64
  // CHECK-NEXT: tle.device_barrier wait %[[COMM]], %[[INDEX]] team world group thread order seq_cst : !llvm.ptr
  tle.device_barrier wait %comm, %index team world group thread order seq_cst : !llvm.ptr
  // CHECK-NEXT: tle.device_barrier sync %[[COMM]], %[[INDEX]] team intra group grid multimem : !llvm.ptr
  tle.device_barrier sync %comm, %index team intra group grid multimem : !llvm.ptr
  // CHECK-NEXT: tle.device_barrier sync %[[COMM]], %[[INDEX]] team intra group warp multimem : !llvm.ptr
  tle.device_barrier sync %comm, %index team intra group warp multimem : !llvm.ptr
  return
}

// CHECK-LABEL: func.func @signal_team(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[PEER:.*]]: i32, %[[SIG:.*]]: i32, %[[N:.*]]: i64)
func.func @signal_team(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] : !llvm.ptr
  tle.signal inc %comm, %peer, %sig team intra : !llvm.ptr
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] team inter : !llvm.ptr
  tle.signal inc %comm, %peer, %sig team inter : !llvm.ptr
  // CHECK-NEXT: tle.signal add %[[COMM]], %[[PEER]], %[[SIG]], %[[N]] team world group warp : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n team world group warp : !llvm.ptr
  return
}

// CHECK-LABEL: func.func @queries(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[RAW:.*]]: i64)
func.func @queries(%comm: !llvm.ptr, %raw: i64) -> (i32, i32, i32, i32, i32, i32) {
  // CHECK-NEXT: %[[R0:.*]] = tle.team_rank %[[COMM]] team intra : !llvm.ptr
  // CHECK-NEXT: %[[R1:.*]] = tle.team_rank %[[COMM]] team inter : !llvm.ptr
  // CHECK-NEXT: %[[R2:.*]] = tle.team_rank %[[RAW]] team world : i64
  // CHECK-NEXT: %[[S0:.*]] = tle.team_size %[[COMM]] team intra : !llvm.ptr
  // CHECK-NEXT: %[[S1:.*]] = tle.team_size %[[COMM]] team inter : !llvm.ptr
  // CHECK-NEXT: %[[S2:.*]] = tle.team_size %[[RAW]] team world : i64
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[S0]], %[[S1]], %[[S2]]
  %r0 = tle.team_rank %comm team intra : !llvm.ptr
  %r1 = tle.team_rank %comm team inter : !llvm.ptr
  %r2 = tle.team_rank %raw team world : i64
  %s0 = tle.team_size %comm team intra : !llvm.ptr
  %s1 = tle.team_size %comm team inter : !llvm.ptr
  %s2 = tle.team_size %raw team world : i64
  return %r0, %r1, %r2, %s0, %s1, %s2 : i32, i32, i32, i32, i32, i32
}
