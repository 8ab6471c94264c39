// Deliberately broken, twice (docs/debugging.md walks through it): the ring
// exchange of examples/ring.mlir with several blocks, where every block
// uses barrier slot 0 and the barrier is relaxed. Each thread stores
// `rank * 1000 + i` into element i of its right neighbour's `recv`, the
// ranks meet at the barrier, and each thread checks that its own `recv[i]`
// holds its left neighbour's value (ok[i] = 1) or not (0).
//
// 1. Two blocks share slot 0: one block's arrival counts for the other,
//    so a block may pass the barrier before its peers' block stored.
// 2. `order relaxed` orders nothing: even with a slot per block, the store
//    before the barrier need not be visible to the load after it on a GPU.
//
//   tlerun examples/broken/ring-two-bugs.mlir --kernel ring --ranks 4 \
//     --grid 2 --block 4 --buffer recv:i32:8 --buffer ok:i32:8 --dump ok
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ring(%comm: !llvm.ptr, %recv: !llvm.ptr, %ok: !llvm.ptr)
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
      %slot = arith.constant 0 : i32

      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %c1000 = arith.constant 1000 : i32
      %rankPlus1 = arith.addi %rank, %one : i32
      %right = arith.remui %rankPlus1, %size : i32
      %rankTimes = arith.muli %rank, %c1000 : i32
      %mine = arith.addi %rankTimes, %gid32 : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      llvm.store %mine, %dst : i32, !llvm.ptr

      tle.device_intra_barrier sync %comm, %slot group block order relaxed : !llvm.ptr

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
      gpu.return
    }
  }
}
