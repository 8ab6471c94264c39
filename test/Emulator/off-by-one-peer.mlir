// Off-by-one peers. `wrap`: the right neighbour computed as rank + 1
// without the wrap-around, so the last rank names a peer that does not
// exist; the device library refuses the pointer and the report names the
// op's line. `row`: an all-gather whose row index is clamped (min(rank + 1,
// n - 1)) instead of being the rank, so the last two ranks store into the
// same row of every peer at once: a race between two writes. With the
// modulo and row = rank both are clean.
//
// RUN: %python %S/sweep.py %s --kernel wrap --expect "peer 3 is out of range" \
// RUN:   -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer rows:i32:12
// RUN: %python %S/sweep.py %s --kernel row --expect "data race on symmetric buffer 'rows'" \
// RUN:   -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer rows:i32:12
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean \
// RUN:   -- --ranks 3 --block 4 --buffer recv:i32:4 --buffer rows:i32:12
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @wrap(%comm: !llvm.ptr, %recv: !llvm.ptr, %rows: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %tid64 = arith.index_cast %tid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %right = arith.addi %rank, %one : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr // site: wrap
      llvm.store %rank, %dst : i32, !llvm.ptr
      gpu.return
    }

    gpu.func @row(%comm: !llvm.ptr, %recv: !llvm.ptr, %rows: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %last = arith.subi %size, %one : i32
      %row32 = arith.minui %next, %last : i32
      %row = arith.index_cast %row32 : i32 to index
      %rowStart = arith.muli %row, %bdim : index
      %elem = arith.addi %rowStart, %tid : index
      %c4 = arith.constant 4 : index
      %byte = arith.muli %elem, %c4 : index
      %offset = arith.index_cast %byte : index to i64
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.index_cast %size : i32 to index
      scf.for %peer = %c0 to %n step %c1 {
        %peer32 = arith.index_cast %peer : index to i32
        %dst = tle.intra_pointer %rows, %offset, %peer32 : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr // site: row
      }
      %slot = arith.constant 0 : i32
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr, %recv: !llvm.ptr, %rows: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %tid64 = arith.index_cast %tid : index to i64
      %c4i = arith.constant 4 : i64
      %recvOffset = arith.muli %tid64, %c4i : i64
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %next = arith.addi %rank, %one : i32
      %right = arith.remui %next, %size : i32
      %ring = tle.intra_pointer %recv, %recvOffset, %right : !llvm.ptr
      llvm.store %rank, %ring : i32, !llvm.ptr
      %row = arith.index_cast %rank : i32 to index
      %rowStart = arith.muli %row, %bdim : index
      %elem = arith.addi %rowStart, %tid : index
      %c4 = arith.constant 4 : index
      %byte = arith.muli %elem, %c4 : index
      %offset = arith.index_cast %byte : index to i64
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.index_cast %size : i32 to index
      scf.for %peer = %c0 to %n step %c1 {
        %peer32 = arith.index_cast %peer : index to i32
        %dst = tle.intra_pointer %rows, %offset, %peer32 : !llvm.ptr
        llvm.store %rank, %dst : i32, !llvm.ptr
      }
      %slot = arith.constant 0 : i32
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      gpu.return
    }
  }
}
