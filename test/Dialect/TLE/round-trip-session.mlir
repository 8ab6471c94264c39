// RUN: tle-opt %s --verify-roundtrip | tle-opt | FileCheck %s

// The session ops print as they parse; defaults (group block, order
// acq_rel) are elided.

// CHECK-LABEL: func.func @session(
// CHECK: %[[E0:.*]] = tle.session_open %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK: %[[E1:.*]] = tle.session_barrier arrive %{{.*}}, %{{.*}}, %[[E0]] order release : !llvm.ptr
// CHECK: %[[E2:.*]] = tle.session_barrier wait %{{.*}}, %{{.*}}, %[[E1]] : !llvm.ptr
// CHECK: %[[E3:.*]] = tle.session_barrier sync %{{.*}}, %{{.*}}, %[[E2]] group warp order seq_cst : !llvm.ptr
// CHECK: tle.session_close %{{.*}}, %{{.*}}, %[[E3]] : !llvm.ptr
// CHECK: tle.session_open %{{.*}}, %{{.*}} group thread : i64
func.func @session(%comm: !llvm.ptr, %raw: i64, %slot: i32) {
  %e0 = tle.session_open %comm, %slot group block : !llvm.ptr
  %e1 = tle.session_barrier arrive %comm, %slot, %e0 order release : !llvm.ptr
  %e2 = tle.session_barrier wait %comm, %slot, %e1 order acq_rel : !llvm.ptr
  %e3 = tle.session_barrier sync %comm, %slot, %e2 group warp order seq_cst : !llvm.ptr
  tle.session_close %comm, %slot, %e3 : !llvm.ptr
  %f = tle.session_open %raw, %slot group thread : i64
  tle.session_close %raw, %slot, %f group thread : i64
  return
}
