// A put ring over the WORLD team, as FlagCX-built IR would spell it with
// TLE's ops: every thread writes `rank * 1000 + i` into element i of its
// own `src`, the block puts `src` to its right world neighbour's `recv`
// with a signal (word 0) released after the data and a local counter
// (counter 0) for when `src` may be reused, waits for the counter and for
// its left neighbour's signal, then checks `recv`, recording 1 (right) or
// 0 (wrong) in `ok`. A get of the left neighbour's `src` into `back`,
// completed by a flush, must then hold the same values.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @put_ring(%comm: !llvm.ptr, %src: !llvm.ptr, %recv: !llvm.ptr, %back: !llvm.ptr,
                       %ok: !llvm.ptr) kernel {
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %tid32 = arith.index_cast %tid : index to i32
      %tid64 = arith.index_cast %tid : index to i64
      %bdim64 = arith.index_cast %bdim : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %tid64, %c4 : i64
      %bytes = arith.muli %bdim64, %c4 : i64
      %zero = arith.constant 0 : i64
      %w0 = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %one64 = arith.constant 1 : i64
      %c1000 = arith.constant 1000 : i32

      %rank = tle.team_rank %comm team world : !llvm.ptr
      %size = tle.team_size %comm team world : !llvm.ptr
      %rankPlus1 = arith.addi %rank, %one : i32
      %right = arith.remui %rankPlus1, %size : i32
      %sizeMinus1 = arith.subi %size, %one : i32
      %rankPlusSizeMinus1 = arith.addi %rank, %sizeMinus1 : i32
      %left = arith.remui %rankPlusSizeMinus1, %size : i32

      %rankTimes = arith.muli %rank, %c1000 : i32
      %mine = arith.addi %rankTimes, %tid32 : i32
      %srcPtr = tle.local_pointer %src, %offset : !llvm.ptr
      llvm.store %mine, %srcPtr : i32, !llvm.ptr

      tle.put %comm, %recv[%zero], %src[%zero], %bytes, %right team world signal inc %w0 counter %w0 order release : !llvm.ptr
      tle.counter_wait %comm, %w0, %one64 : !llvm.ptr
      tle.signal_wait %comm, %w0, %one64 : !llvm.ptr

      %leftTimes = arith.muli %left, %c1000 : i32
      %expected = arith.addi %leftTimes, %tid32 : i32
      %recvPtr = tle.local_pointer %recv, %offset : !llvm.ptr
      %got = llvm.load %recvPtr : !llvm.ptr -> i32
      %same = arith.cmpi eq, %got, %expected : i32

      tle.get %comm, %src[%zero], %back[%zero], %bytes, %left team world : !llvm.ptr
      tle.flush %comm : !llvm.ptr
      %backPtr = tle.local_pointer %back, %offset : !llvm.ptr
      %gotBack = llvm.load %backPtr : !llvm.ptr -> i32
      %sameBack = arith.cmpi eq, %gotBack, %expected : i32
      %both = arith.andi %same, %sameBack : i1
      %flag = arith.extui %both : i1 to i32
      %okPtr = tle.local_pointer %ok, %offset : !llvm.ptr
      llvm.store %flag, %okPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
