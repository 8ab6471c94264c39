// Two producers, one consumer, one signal word: ranks 1 and 2 each store
// their rank into element `rank` of rank 0's `recv` and add 1 to rank 0's
// word 0; rank 0 waits for the word and then reads both elements. Waiting
// for >= 1 is the bug: the wait acquires the adds of the word's history up
// to the first that reached its target (docs/emulator.md, "What a signal
// wait acquires"), so one producer's store is unordered with its read on
// every schedule, also where both adds happened to land before the wait
// looked. Waiting for >= 2 orders both, on every schedule. A word not reset
// between launches is the same bug in the second launch: it already holds
// 2, so the wait passes on the first launch's adds and acquires nothing.
//
// RUN: %python %S/sweep.py %s --seeds 12 --kernel need_one --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --seeds 12 --kernel need_two --expect clean -- --ranks 3 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --seeds 12 --kernel not_reset --expect "data race on symmetric buffer 'recv'" -- --ranks 3 --repeat 2 --buffer recv:i32:4 --buffer ok:i32:4
// RUN: %python %S/sweep.py %s --seeds 12 --kernel reset --expect clean -- --ranks 3 --repeat 3 --buffer recv:i32:4 --buffer ok:i32:4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @need_one(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %zero = arith.constant 0 : i32
      %c4 = arith.constant 4 : i64
      %target = arith.constant 1 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %consumer = arith.cmpi eq, %rank, %zero : i32
      scf.if %consumer {
        tle.signal_wait %comm, %word, %target : !llvm.ptr
        %lo = arith.constant 1 : index
        %hi = arith.constant 3 : index
        %step = arith.constant 1 : index
        scf.for %q = %lo to %hi step %step {
          %q64 = arith.index_cast %q : index to i64
          %offset = arith.muli %q64, %c4 : i64
          %src = tle.local_pointer %recv, %offset : !llvm.ptr
          %got = llvm.load %src : !llvm.ptr -> i32 // site: need_one
          %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
          llvm.store %got, %okPtr : i32, !llvm.ptr
        }
      } else {
        %rank64 = arith.extui %rank : i32 to i64
        %offset = arith.muli %rank64, %c4 : i64
        %dst = tle.intra_pointer %recv, %offset, %zero : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr // site: need_one
        tle.signal inc %comm, %zero, %word : !llvm.ptr
      }
      gpu.return
    }

    gpu.func @need_two(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %zero = arith.constant 0 : i32
      %c4 = arith.constant 4 : i64
      %target = arith.constant 2 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %consumer = arith.cmpi eq, %rank, %zero : i32
      scf.if %consumer {
        tle.signal_wait %comm, %word, %target : !llvm.ptr
        %lo = arith.constant 1 : index
        %hi = arith.constant 3 : index
        %step = arith.constant 1 : index
        scf.for %q = %lo to %hi step %step {
          %q64 = arith.index_cast %q : index to i64
          %offset = arith.muli %q64, %c4 : i64
          %src = tle.local_pointer %recv, %offset : !llvm.ptr
          %got = llvm.load %src : !llvm.ptr -> i32
          %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
          llvm.store %got, %okPtr : i32, !llvm.ptr
        }
      } else {
        %rank64 = arith.extui %rank : i32 to i64
        %offset = arith.muli %rank64, %c4 : i64
        %dst = tle.intra_pointer %recv, %offset, %zero : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr
        tle.signal inc %comm, %zero, %word : !llvm.ptr
      }
      gpu.return
    }

    // need_two, launched again without a reset: the second launch's wait
    // passes on the 2 the first launch left.
    gpu.func @not_reset(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %zero = arith.constant 0 : i32
      %c4 = arith.constant 4 : i64
      %target = arith.constant 2 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %consumer = arith.cmpi eq, %rank, %zero : i32
      scf.if %consumer {
        tle.signal_wait %comm, %word, %target : !llvm.ptr
        %lo = arith.constant 1 : index
        %hi = arith.constant 3 : index
        %step = arith.constant 1 : index
        scf.for %q = %lo to %hi step %step {
          %q64 = arith.index_cast %q : index to i64
          %offset = arith.muli %q64, %c4 : i64
          %src = tle.local_pointer %recv, %offset : !llvm.ptr
          %got = llvm.load %src : !llvm.ptr -> i32 // site: not_reset
          %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
          llvm.store %got, %okPtr : i32, !llvm.ptr
        }
      } else {
        %rank64 = arith.extui %rank : i32 to i64
        %offset = arith.muli %rank64, %c4 : i64
        %dst = tle.intra_pointer %recv, %offset, %zero : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr // site: not_reset
        tle.signal inc %comm, %zero, %word : !llvm.ptr
      }
      gpu.return
    }

    // The fix: the consumer resets its word after the reads, and a barrier
    // orders the reset before the next launch's adds (every rank reaches it
    // after its add; the consumer after its reset).
    gpu.func @reset(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %slot = arith.constant 0 : i32
      %zero = arith.constant 0 : i32
      %c4 = arith.constant 4 : i64
      %target = arith.constant 2 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %consumer = arith.cmpi eq, %rank, %zero : i32
      scf.if %consumer {
        tle.signal_wait %comm, %word, %target : !llvm.ptr
        %lo = arith.constant 1 : index
        %hi = arith.constant 3 : index
        %step = arith.constant 1 : index
        scf.for %q = %lo to %hi step %step {
          %q64 = arith.index_cast %q : index to i64
          %offset = arith.muli %q64, %c4 : i64
          %src = tle.local_pointer %recv, %offset : !llvm.ptr
          %got = llvm.load %src : !llvm.ptr -> i32
          %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
          llvm.store %got, %okPtr : i32, !llvm.ptr
        }
        tle.reset_signal %comm, %word : !llvm.ptr
      } else {
        %rank64 = arith.extui %rank : i32 to i64
        %offset = arith.muli %rank64, %c4 : i64
        %dst = tle.intra_pointer %recv, %offset, %zero : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr
        tle.signal inc %comm, %zero, %word : !llvm.ptr
      }
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      gpu.return
    }
  }
}
