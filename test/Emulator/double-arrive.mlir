// A group that arrives twice on a slot without waiting: the second arrive
// counts as the next round for the peers, which then pass a barrier this
// rank has not reached. Arrive, wait, arrive, wait is clean.
//
// RUN: %python %S/sweep.py %s --kernel buggy --expect "arrives twice on slot 0 without a wait" -- --ranks 2 --block 4
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 2 --block 4
// RUN: not tlerun %s --kernel buggy --ranks 2 --block 4 --seed 1 2>&1 | FileCheck %s
// CHECK: barrier misuse: block 0 (group block) of rank {{[01]}} arrives twice on slot 0 without a wait:
// CHECK-NEXT: first arrive at {{.*}}double-arrive.mlir:[[#FIRST:]]:7
// CHECK-NEXT: then arrive at {{.*}}double-arrive.mlir:[[#FIRST+1]]:7
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr) kernel {
      %slot = arith.constant 0 : i32
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr // site: buggy
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr // site: buggy
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr) kernel {
      %slot = arith.constant 0 : i32
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      gpu.return
    }
  }
}
