// Ring exchange with point-to-point signals: every thread writes
// `rank * 1000 + i` (i its global thread id) into element i of its right
// neighbour's `recv`, each block signals the same block of the right
// neighbour (signal word = block id), and waits only for its left
// neighbour's signal, not for every rank as ring.mlir's barrier does. Then
// each thread checks that its own `recv[i]` holds the left neighbour's
// value, recording 1 (right) or 0 (wrong) in `ok[i]`.
//
// The signal is a release: the block's stores before it are visible to the
// neighbour's block once its wait (acquire) sees the word reach 1. The word
// is then reset, and a barrier keeps the next launch's signal from arriving
// before that reset (the barrier's arrive comes after the reset, and every
// peer's next signal after its wait): the pattern for reusing a word.
//
//   tlerun examples/ring-signal.mlir --kernel ring_signal --ranks 4 \
//     --grid 2 --block 4 --buffer recv:i32:8 --buffer ok:i32:8 --dump ok
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ring_signal(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr)
        kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %gid32 = arith.index_cast %gid : index to i32
      %gid64 = arith.index_cast %gid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %gid64, %c4 : i64
      %word = arith.index_cast %bid : index to i32

      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %one64 = arith.constant 1 : i64
      %c1000 = arith.constant 1000 : i32
      %rankPlus1 = arith.addi %rank, %one : i32
      %right = arith.remui %rankPlus1, %size : i32
      %rankTimes = arith.muli %rank, %c1000 : i32
      %mine = arith.addi %rankTimes, %gid32 : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %mine, %dst : i32, !llvm.ptr

      tle.signal inc %comm, %right, %word : !llvm.ptr
      tle.signal_wait %comm, %word, %one64 : !llvm.ptr

      %sizeMinus1 = arith.subi %size, %one : i32
      %rankPlusSizeMinus1 = arith.addi %rank, %sizeMinus1 : i32
      %left = arith.remui %rankPlusSizeMinus1, %size : i32
      %leftTimes = arith.muli %left, %c1000 : i32
      %expected = arith.addi %leftTimes, %gid32 : i32
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %src : !llvm.ptr -> i32
      %same = arith.cmpi eq, %got, %expected : i32
      %flag = arith.extui %same : i1 to i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %flag, %okPtr : i32, !llvm.ptr

      tle.reset_signal %comm, %word : !llvm.ptr
      tle.device_intra_barrier sync %comm, %word : !llvm.ptr
      gpu.return
    }
  }
}
