// Every rank waits on its word 1, which nobody signals (rank r signals word
// 0 of its right neighbour instead): a deadlock that names the word.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @never(%comm: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %rankPlus1 = arith.addi %rank, %one : i32
      %right = arith.remui %rankPlus1, %size : i32
      %w0 = arith.constant 0 : i32
      %one64 = arith.constant 1 : i64
      tle.signal inc %comm, %right, %w0 : !llvm.ptr
      tle.signal_wait %comm, %one, %one64 : !llvm.ptr
      gpu.return
    }
  }
}
