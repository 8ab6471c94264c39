// Two blocks sharing one barrier slot. A slot's state belongs to the group
// using it; with both blocks of a rank in slot 0 their arrivals count for
// each other, and the barrier lets a block through before its peers'
// blocks stored (on a GPU: wrong data, or a hang, with no error). The
// emulator sees the second block enter the slot the first has not left.
// Each block on its own slot (index = block id) is clean.
//
// RUN: %python %S/sweep.py %s --kernel buggy --expect "barrier misuse: two groups use slot 0 of rank" -- --ranks 3 --grid 2 --block 4 --buffer data:i32:8
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 3 --grid 2 --block 4 --buffer data:i32:8
// RUN: not tlerun %s --kernel buggy --ranks 2 --grid 2 --block 2 --buffer data:i32:4 \
// RUN:   --seed 3 2>&1 | FileCheck %s
// CHECK: tlerun: launch 1 of 1 failed: barrier slot misused
// CHECK-NEXT: barrier misuse: two groups use slot 0 of rank {{[01]}} at once:
// CHECK-NEXT: block {{[01]}} (group block) entered it with sync at {{.*}}shared-slot.mlir:[[LINE:[0-9]+]]:7 and has not left it
// CHECK-NEXT: block {{[01]}} (group block) enters it with sync at {{.*}}shared-slot.mlir:[[LINE]]:7
// CHECK-NEXT: one slot serves one group at a time
// CHECK: replay with --seed 3
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr, %data: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %gid64 = arith.index_cast %gid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %gid64, %c4 : i64
      %slot = arith.constant 0 : i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %data, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr // site: buggy
      %src = tle.local_pointer %data, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr, %data: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %gid64 = arith.index_cast %gid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %gid64, %c4 : i64
      %slot = arith.index_cast %bid : index to i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %data, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      %src = tle.local_pointer %data, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      gpu.return
    }
  }
}
