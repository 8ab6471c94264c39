// RUN: tle-opt %s --tle-emu-instrument | FileCheck %s

// Every access reports itself to the race checker with its size, kind and
// order (abi.def: kinds load 0, store 1, atomic load 2, atomic store 3,
// atomic update 4, fence 5; orders relaxed 0, acquire 1, release 2,
// acq_rel 3, seq_cst 4) and its line; atomic and volatile loads are
// followed by a spin hint with the value read; device-library calls and
// block syncs are wrapped in tleEmuSite(line) ... tleEmuSite(null).

// CHECK-DAG: llvm.func @tleEmuSite(!llvm.ptr)
// CHECK-DAG: llvm.func @tleEmuAccess(!llvm.ptr, i64, i32, i32, !llvm.ptr)
// CHECK-DAG: llvm.func @tleEmuSpinHint(!llvm.ptr, i64)
// One string per distinct location, shared by the ops at it.
// CHECK-DAG: llvm.mlir.global private constant @[[SYNC:__tle_site\.[0-9]+]]("k.mlir:9:7\00")
// CHECK-DAG: llvm.mlir.global private constant @[[LOAD:__tle_site\.[0-9]+]]("k.mlir:10:12\00")
// CHECK-DAG: llvm.mlir.global private constant @[[STORE:__tle_site\.[0-9]+]]("k.mlir:11:5\00")
// The first file location of a fused one.
// CHECK-DAG: llvm.mlir.global private constant @{{__tle_site\.[0-9]+}}("k.mlir:19:5\00")
// CHECK-NOT: other.mlir

// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %[[COMM:[^:]+]]: !llvm.ptr, %[[P:[^:]+]]: !llvm.ptr, %[[Q:[^:]+]]: !llvm.ptr<1>
llvm.func @flagcxIntraBarrierSyncS(!llvm.ptr, i32, i32, i1, i32)
llvm.func @tleEmuSyncBlock()
llvm.func @k(%comm: !llvm.ptr, %p: !llvm.ptr, %q: !llvm.ptr<1>, %v: f32) {
  %c2 = llvm.mlir.constant(2 : i32) : i32
  %f = llvm.mlir.constant(false) : i1
  // CHECK: %[[S0:.*]] = llvm.mlir.addressof @[[SYNC]]
  // CHECK-NEXT: llvm.call @tleEmuSite(%[[S0]])
  // CHECK-NEXT: llvm.call @flagcxIntraBarrierSyncS(
  // CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK-NEXT: llvm.call @tleEmuSite(%[[NULL]])
  llvm.call @flagcxIntraBarrierSyncS(%comm, %c2, %c2, %f, %c2) : (!llvm.ptr, i32, i32, i1, i32) -> () loc("k.mlir":9:7)
  // A plain load: kind 0, 4 bytes, no hint.
  // CHECK: llvm.load %[[P]] : !llvm.ptr -> i32
  // CHECK-DAG: %[[K0:.*]] = llvm.mlir.constant(0 : i32) : i32
  // CHECK-DAG: %[[B4:.*]] = llvm.mlir.constant(4 : i64) : i64
  // CHECK-DAG: %[[L:.*]] = llvm.mlir.addressof @[[LOAD]]
  // CHECK: llvm.call @tleEmuAccess(%[[P]], %[[B4]], %[[K0]], %{{.*}}, %[[L]])
  // CHECK-NOT: tleEmuSpinHint
  %x = llvm.load %p : !llvm.ptr -> i32 loc("k.mlir":10:12)
  // CHECK: llvm.store
  // CHECK: %[[K1:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @tleEmuAccess(%[[P]], %{{.*}}, %[[K1]], %{{.*}}, %{{.*}})
  llvm.store %x, %p : i32, !llvm.ptr loc("k.mlir":11:5)
  // An acquire load: kind 2, order 1, then the hint with the value.
  // CHECK: %[[A:.*]] = llvm.load %[[P]] atomic acquire
  // CHECK-DAG: %[[K2:.*]] = llvm.mlir.constant(2 : i32) : i32
  // CHECK-DAG: %[[O1:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @tleEmuAccess(%[[P]], %{{.*}}, %[[K2]], %[[O1]], %{{.*}})
  // CHECK: %[[AV:.*]] = llvm.zext %[[A]] : i32 to i64
  // CHECK: llvm.call @tleEmuSpinHint(%[[P]], %[[AV]])
  %a = llvm.load %p atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32 loc("k.mlir":12:5)
  // A volatile load of another address space: a plain load for the race
  // checker, a poll for the scheduler; a float's bits are the value.
  // CHECK: %[[W:.*]] = llvm.load volatile %[[Q]] : !llvm.ptr<1> -> f32
  // CHECK: %[[QG:.*]] = llvm.addrspacecast %[[Q]] : !llvm.ptr<1> to !llvm.ptr
  // CHECK: llvm.call @tleEmuAccess(%[[QG]],
  // CHECK: %[[WI:.*]] = llvm.bitcast %[[W]] : f32 to i32
  // CHECK: %[[WV:.*]] = llvm.zext %[[WI]] : i32 to i64
  // CHECK: llvm.call @tleEmuSpinHint(%{{.*}}, %[[WV]])
  %w = llvm.load volatile %q : !llvm.ptr<1> -> f32 loc("k.mlir":13:5)
  // A release store: kind 3, order 2, no hint.
  // CHECK: llvm.store %{{.*}}, %[[Q]] atomic release
  // CHECK-DAG: %[[K3:.*]] = llvm.mlir.constant(3 : i32) : i32
  // CHECK-DAG: %[[O2:.*]] = llvm.mlir.constant(2 : i32) : i32
  // CHECK: llvm.call @tleEmuAccess(%{{.*}}, %{{.*}}, %[[K3]], %[[O2]], %{{.*}})
  // CHECK-NOT: tleEmuSpinHint
  llvm.store %v, %q atomic release {alignment = 4 : i64} : f32, !llvm.ptr<1> loc("k.mlir":14:5)
  // CHECK: %[[R:.*]] = llvm.atomicrmw add %[[P]]
  // CHECK-DAG: %[[K4:.*]] = llvm.mlir.constant(4 : i32) : i32
  // CHECK-DAG: %[[O3:.*]] = llvm.mlir.constant(3 : i32) : i32
  // CHECK: llvm.call @tleEmuAccess(%[[P]], %{{.*}}, %[[K4]], %[[O3]], %{{.*}})
  // CHECK: llvm.call @tleEmuSpinHint(%[[P]],
  %r = llvm.atomicrmw add %p, %x acq_rel : !llvm.ptr, i32 loc("k.mlir":15:5)
  // A compare-and-swap: an update with its success order if it wrote, an
  // atomic load with its failure order if not.
  // CHECK: %[[C:.*]] = llvm.cmpxchg %[[P]]
  // CHECK: %[[OLD:.*]] = llvm.extractvalue %[[C]][0]
  // CHECK: %[[OK:.*]] = llvm.extractvalue %[[C]][1]
  // CHECK: %[[KIND:.*]] = llvm.select %[[OK]], %{{.*}}, %{{.*}} : i1, i32
  // CHECK: %[[ORDER:.*]] = llvm.select %[[OK]], %{{.*}}, %{{.*}} : i1, i32
  // CHECK: llvm.call @tleEmuAccess(%[[P]], %{{.*}}, %[[KIND]], %[[ORDER]], %{{.*}})
  // CHECK: llvm.call @tleEmuSpinHint(%[[P]],
  %c = llvm.cmpxchg %p, %x, %r acq_rel monotonic : !llvm.ptr, i32 loc("k.mlir":16:5)
  // A fence: kind 5 with its order and no address.
  // CHECK: llvm.fence seq_cst
  // CHECK-NEXT: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK-DAG: %[[K5:.*]] = llvm.mlir.constant(5 : i32) : i32
  // CHECK-DAG: %[[O4:.*]] = llvm.mlir.constant(4 : i32) : i32
  // CHECK: llvm.call @tleEmuAccess(%[[Z]], %{{.*}}, %[[K5]], %[[O4]], %{{.*}})
  llvm.fence seq_cst loc("k.mlir":17:5)
  // The stack is private: no report.
  // CHECK: %[[S:.*]] = llvm.alloca
  // CHECK-NEXT: llvm.store %{{.*}}, %[[S]]
  // CHECK-NEXT: llvm.mlir.addressof
  // CHECK-NEXT: llvm.call @tleEmuSite(
  // CHECK-NEXT: llvm.call @tleEmuSyncBlock()
  // CHECK-NEXT: llvm.mlir.zero
  // CHECK-NEXT: llvm.call @tleEmuSite(
  %one = llvm.mlir.constant(1 : i64) : i64
  %s = llvm.alloca %one x i32 : (i64) -> !llvm.ptr
  llvm.store %x, %s : i32, !llvm.ptr loc("k.mlir":18:5)
  llvm.call @tleEmuSyncBlock() : () -> () loc(fused["k.mlir":19:5, "other.mlir":1:1])
  // The same location reuses its string.
  // CHECK: llvm.store
  // CHECK: llvm.mlir.addressof @[[STORE]]
  llvm.store %x, %p : i32, !llvm.ptr loc("k.mlir":11:5)
  llvm.return
}
