// A read of a peer's data before the barrier orders it: the ring
// exchange with a split barrier (arrive release, wait acquire) that reads
// its `recv` between the arrive and the wait. The left neighbour's store is
// only guaranteed visible after the wait. Reading after the wait is clean.
//
// RUN: %python %S/sweep.py %s --kernel buggy --expect "data race on symmetric buffer 'recv'" -- --ranks 4 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 4 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
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
      llvm.store %rank, %dst : i32, !llvm.ptr // site: buggy
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: buggy
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
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
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
