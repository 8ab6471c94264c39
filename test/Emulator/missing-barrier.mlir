// A ring exchange with no barrier between the remote store and the read:
// each rank stores into its right neighbour's `recv` and reads its own,
// which the left neighbour is storing into at the same time. The race is
// reported with both accesses for every schedule; with the barrier back
// (acq_rel) every schedule is clean.
//
// RUN: %python %S/sweep.py %s --kernel buggy --expect "data race on symmetric buffer 'recv'" \
// RUN:   -- --ranks 4 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean \
// RUN:   -- --ranks 4 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: not tlerun %s --kernel buggy --ranks 2 --block 2 --buffer recv:i32:2 \
// RUN:   --buffer ok:i32:2 --seed 7 2>&1 | FileCheck %s
// CHECK: tlerun: launch 1 of 1 failed: data race on symmetric memory
// CHECK-NEXT: data race on symmetric buffer 'recv' (rank {{[01]}}'s copy) at byte offset {{[04]}}:
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      // CHECK-DAG: write by rank {{[01]}} block 0 thread {{[01]}}, 4 bytes at offset {{[04]}}, at {{.*}}missing-barrier.mlir:[[@LINE+1]]:7
      llvm.store %rank, %dst : i32, !llvm.ptr // site: buggy
      // Missing: tle.device_intra_barrier sync ... order acq_rel
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      // CHECK-DAG: read by rank {{[01]}} block 0 thread {{[01]}}, 4 bytes at offset {{[04]}}, at {{.*}}missing-barrier.mlir:[[@LINE+1]]:14
      %got = llvm.load %src : !llvm.ptr -> i32 // site: buggy
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %slot = arith.constant 0 : i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
// CHECK: replay with --seed 7
