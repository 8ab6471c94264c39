// RUN: tle-opt %s --tle-form-barrier-sessions --split-input-file | FileCheck %s

// The barriers of a loop on one slot become a session: opened in front of
// the loop, the epoch carried as an iter_arg, closed behind it. The
// stateless barrier after the loop, on the same slot, stays stateless and
// continues from the epoch the close wrote back.

// CHECK-LABEL: func.func @for_loop(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[SLOT:.*]]: i32, %[[N:.*]]: index)
// CHECK: %[[E0:.*]] = tle.session_open %[[COMM]], %[[SLOT]] : !llvm.ptr
// CHECK-NEXT: %[[E:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[E1:.*]] = %[[E0]]) -> (i32) {
// CHECK-NEXT:   %[[E2:.*]] = tle.session_barrier sync %[[COMM]], %[[SLOT]], %[[E1]] : !llvm.ptr
// CHECK-NEXT:   scf.yield %[[E2]] : i32
// CHECK-NEXT: }
// CHECK-NEXT: tle.session_close %[[COMM]], %[[SLOT]], %[[E]] : !llvm.ptr
// CHECK-NEXT: tle.device_intra_barrier sync %[[COMM]], %[[SLOT]] order relaxed : !llvm.ptr
// CHECK-NOT: tle.session
func.func @for_loop(%comm: !llvm.ptr, %slot: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
  }
  tle.device_intra_barrier sync %comm, %slot order relaxed : !llvm.ptr
  return
}

// -----

// An arrive / wait split around work, in a loop that already carries a
// value: the epoch is appended after it, the halves keep kinds and orders,
// and the loop's own result keeps its uses.

// CHECK-LABEL: func.func @split_with_iter_args(
// CHECK-SAME: %[[COMM:.*]]: i64, %[[SLOT:.*]]: i32
// CHECK: %[[E0:.*]] = tle.session_open %[[COMM]], %[[SLOT]] group warp : i64
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[E1:.*]] = %[[E0]]) -> (f32, i32) {
// CHECK-NEXT:   %[[A:.*]] = tle.session_barrier arrive %[[COMM]], %[[SLOT]], %[[E1]] group warp order release : i64
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[ACC]], %[[ACC]] : f32
// CHECK-NEXT:   %[[W:.*]] = tle.session_barrier wait %[[COMM]], %[[SLOT]], %[[A]] group warp order acquire : i64
// CHECK-NEXT:   scf.yield %[[SUM]], %[[W]] : f32, i32
// CHECK: tle.session_close %[[COMM]], %[[SLOT]], %[[R]]#1 group warp : i64
// CHECK-NEXT: return %[[R]]#0 : f32
func.func @split_with_iter_args(%comm: i64, %slot: i32, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %x) -> (f32) {
    tle.device_intra_barrier arrive %comm, %slot group warp order release : i64
    %s = arith.addf %acc, %acc : f32
    tle.device_intra_barrier wait %comm, %slot group warp order acquire : i64
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// Nested loops: the outer loop takes the session and the epoch runs
// through the inner loop, and through an scf.if (both branches yield it;
// the missing else is made).

// CHECK-LABEL: func.func @nested(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[SLOT:.*]]: i32, %[[C:.*]]: i1
// CHECK: %[[E0:.*]] = tle.session_open %[[COMM]], %[[SLOT]] : !llvm.ptr
// CHECK-NEXT: %[[OUT:.*]] = scf.for {{.*}} iter_args(%[[EO:.*]] = %[[E0]]) -> (i32) {
// CHECK-NEXT:   %[[IN:.*]] = scf.for {{.*}} iter_args(%[[EI:.*]] = %[[EO]]) -> (i32) {
// CHECK-NEXT:     %[[S:.*]] = tle.session_barrier sync %[[COMM]], %[[SLOT]], %[[EI]] : !llvm.ptr
// CHECK-NEXT:     scf.yield %[[S]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[IF:.*]] = scf.if %[[C]] -> (i32) {
// CHECK-NEXT:     %[[T:.*]] = tle.session_barrier sync %[[COMM]], %[[SLOT]], %[[IN]] order seq_cst : !llvm.ptr
// CHECK-NEXT:     scf.yield %[[T]] : i32
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.yield %[[IN]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   scf.yield %[[IF]] : i32
// CHECK-NEXT: }
// CHECK-NEXT: tle.session_close %[[COMM]], %[[SLOT]], %[[OUT]] : !llvm.ptr
func.func @nested(%comm: !llvm.ptr, %slot: i32, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    }
    scf.if %c {
      tle.device_intra_barrier sync %comm, %slot order seq_cst : !llvm.ptr
    }
  }
  return
}

// -----

// An early exit: an scf.while with a barrier in both regions. The epoch
// goes through the condition (a loop that exits there leaves with what
// its before region reached) and back through the after region; the
// close writes back the epoch the condition forwarded.

// CHECK-LABEL: func.func @while_early_exit(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[SLOT:.*]]: i32, %[[FLAGS:.*]]: !llvm.ptr
// CHECK: %[[E0:.*]] = tle.session_open %[[COMM]], %[[SLOT]] : !llvm.ptr
// CHECK-NEXT: %[[W:.*]]:2 = scf.while (%[[K:.*]] = %{{.*}}, %[[EB:.*]] = %[[E0]]) : (i32, i32) -> (i32, i32) {
// CHECK-NEXT:   %[[E1:.*]] = tle.session_barrier wait %[[COMM]], %[[SLOT]], %[[EB]] order acquire : !llvm.ptr
// CHECK-NEXT:   %[[V:.*]] = llvm.load %[[FLAGS]] : !llvm.ptr -> i32
// CHECK-NEXT:   %[[GO:.*]] = arith.cmpi slt, %[[K]], %[[V]] : i32
// CHECK-NEXT:   scf.condition(%[[GO]]) %[[K]], %[[E1]] : i32, i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[KA:.*]]: i32, %[[EA:.*]]: i32):
// CHECK-NEXT:   %[[E2:.*]] = tle.session_barrier arrive %[[COMM]], %[[SLOT]], %[[EA]] order release : !llvm.ptr
// CHECK-NEXT:   %[[K1:.*]] = arith.addi %[[KA]], %{{.*}} : i32
// CHECK-NEXT:   scf.yield %[[K1]], %[[E2]] : i32, i32
// CHECK-NEXT: }
// CHECK-NEXT: tle.session_close %[[COMM]], %[[SLOT]], %[[W]]#1 : !llvm.ptr
// CHECK-NEXT: return %[[W]]#0 : i32
func.func @while_early_exit(%comm: !llvm.ptr, %slot: i32, %flags: !llvm.ptr) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%k = %c0) : (i32) -> i32 {
    tle.device_intra_barrier wait %comm, %slot order acquire : !llvm.ptr
    %v = llvm.load %flags : !llvm.ptr -> i32
    %go = arith.cmpi slt, %k, %v : i32
    scf.condition(%go) %k : i32
  } do {
  ^bb0(%k2: i32):
    tle.device_intra_barrier arrive %comm, %slot order release : !llvm.ptr
    %k3 = arith.addi %k2, %c1 : i32
    scf.yield %k3 : i32
  }
  return %r : i32
}

// -----

// Two loops on the slot in a row: two sessions, the second opened after
// the first closed (it reads the epoch the first wrote back).

// CHECK-LABEL: func.func @two_loops(
// CHECK: tle.session_open
// CHECK: scf.for
// CHECK: tle.session_close
// CHECK-NEXT: tle.session_open
// CHECK-NEXT: scf.for
// CHECK: tle.session_close
func.func @two_loops(%comm: !llvm.ptr, %slot: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
  }
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot group block order relaxed : !llvm.ptr
  }
  return
}

// -----

// Two slots in the outer loop: it forms no session (two index values may
// be one slot at run time), but its inner loop, on one slot, does.

// CHECK-LABEL: func.func @two_slots(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[A:.*]]: i32, %[[B:.*]]: i32
// CHECK: scf.for
// CHECK-NEXT: tle.device_intra_barrier sync %[[COMM]], %[[A]] : !llvm.ptr
// CHECK-NEXT: %[[E0:.*]] = tle.session_open %[[COMM]], %[[B]] : !llvm.ptr
// CHECK-NEXT: %[[E:.*]] = scf.for
// CHECK-NEXT: tle.session_barrier sync %[[COMM]], %[[B]]
// CHECK: tle.session_close %[[COMM]], %[[B]], %[[E]] : !llvm.ptr
func.func @two_slots(%comm: !llvm.ptr, %a: i32, %b: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %a : !llvm.ptr
    scf.for %j = %c0 to %c4 step %c1 {
      tle.device_intra_barrier sync %comm, %b : !llvm.ptr
    }
  }
  return
}

// -----

// Left stateless: a call in the loop (the callee could barrier on the
// slot), a grid barrier, a multimem barrier, a slot computed inside the
// loop, a barrier under a region op that does not carry the epoch, and a
// team-intra device_barrier beside the loop's barrier.

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tle.session
// CHECK: return
func.func private @helper(!llvm.ptr)
func.func @left_alone(%comm: !llvm.ptr, %slot: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    func.call @helper(%comm) : (!llvm.ptr) -> ()
  }
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot group grid : !llvm.ptr
  }
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot multimem : !llvm.ptr
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %s = arith.index_cast %i : index to i32
    tle.device_intra_barrier sync %comm, %s : !llvm.ptr
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.execute_region {
      tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
      scf.yield
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    tle.device_barrier sync %comm, %slot team intra : !llvm.ptr
  }
  return
}

// -----

// Barriers of other teams have slots of their own and do not stop the
// session; neither do signals.

// CHECK-LABEL: func.func @other_teams(
// CHECK: tle.session_open
// CHECK: tle.session_barrier sync
// CHECK-NEXT: tle.device_barrier sync %{{.*}}, %{{.*}} team world
// CHECK-NEXT: tle.signal inc
// CHECK: tle.session_close
func.func @other_teams(%comm: !llvm.ptr, %slot: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    tle.device_barrier sync %comm, %slot team world : !llvm.ptr
    tle.signal inc %comm, %slot, %slot : !llvm.ptr
  }
  return
}
