// A barrier that does not order memory: the ring exchange of
// missing-barrier.mlir with `order relaxed` (neither half orders), with a
// release arrive but a relaxed wait (nothing acquires), and with a relaxed
// arrive but an acquire wait (nothing was released). The emulator itself is
// sequentially consistent, so the data arrives anyway: only the race
// checker, which follows the barrier's memory order edge by edge, sees
// that on a GPU the read may miss the store. acq_rel (or release/acquire
// on the split halves) is clean.
//
// RUN: %python %S/sweep.py %s --kernel relaxed --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel no_acquire --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel no_release --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel fixed_split --expect clean -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @relaxed(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
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
      llvm.store %rank, %dst : i32, !llvm.ptr // site: relaxed
      tle.device_intra_barrier sync %comm, %slot group block order relaxed : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: relaxed
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @no_acquire(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
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
      llvm.store %rank, %dst : i32, !llvm.ptr // site: no_acquire
      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order relaxed : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: no_acquire
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @no_release(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
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
      llvm.store %rank, %dst : i32, !llvm.ptr // site: no_release
      tle.device_intra_barrier arrive %comm, %slot group block order relaxed : !llvm.ptr
      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: no_release
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

    gpu.func @fixed_split(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
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
