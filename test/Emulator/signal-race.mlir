// Producer/consumer over point-to-point signals: every thread writes its
// rank into element `tid` of its right neighbour's `recv`, the block
// signals the neighbour's word 0, and waits on its own word 0 for its left
// neighbour's signal before it reads `recv`. A signal is a release and the
// wait (or a read_signal poll) with an acquire order that observes its
// value acquires it: the race checker's edge from the signaller to the
// waiter, as for the barrier (docs/emulator.md, "Race check"). A relaxed
// wait or poll gives no edge, and a store after the signal is not covered
// by it: the emulator delivers the data anyway, so only the race checker
// sees that a GPU may not, and it names the store's and the load's lines.
//
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel fixed_poll --expect clean -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel relaxed_wait --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel relaxed_poll --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --kernel store_after_signal --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: tlerun %s --kernel relaxed_wait --ranks 3 --block 4 --buffer recv:i32:4 --buffer ok:i32:4 --no-race-check
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fixed(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %word = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr
      tle.signal inc %comm, %right, %word : !llvm.ptr
      tle.signal_wait %comm, %word, %one64 : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @fixed_poll(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %word = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr
      tle.signal inc %comm, %right, %word : !llvm.ptr
      scf.while : () -> () {
        %v = tle.read_signal %comm, %word : !llvm.ptr
        %waiting = arith.cmpi ult, %v, %one64 : i64
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @relaxed_wait(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %word = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr // site: relaxed_wait
      tle.signal inc %comm, %right, %word : !llvm.ptr
      tle.signal_wait %comm, %word, %one64 order relaxed : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: relaxed_wait
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @relaxed_poll(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %word = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr // site: relaxed_poll
      tle.signal inc %comm, %right, %word : !llvm.ptr
      scf.while : () -> () {
        %v = tle.read_signal %comm, %word order relaxed : !llvm.ptr
        %waiting = arith.cmpi ult, %v, %one64 : i64
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: relaxed_poll
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @store_after_signal(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %word = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      tle.signal inc %comm, %right, %word : !llvm.ptr
      llvm.store %rank, %dst : i32, !llvm.ptr // site: store_after_signal
      tle.signal_wait %comm, %word, %one64 : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32 // site: store_after_signal
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %got, %okPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
