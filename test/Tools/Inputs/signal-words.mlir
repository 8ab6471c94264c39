// Constant signal indices 0 and 2, so the bundle asks for 3 words: each
// rank adds 5 to word 0 and 1 to word 2 of its right neighbour, waits for
// both of its own, records word 0 as it reads it in `out`, and resets both.
// With --signals 2, word 2 is out of range.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @words(%comm: !llvm.ptr, %out: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %rankPlus1 = arith.addi %rank, %one : i32
      %right = arith.remui %rankPlus1, %size : i32
      %w0 = arith.constant 0 : i32
      %w2 = arith.constant 2 : i32
      %five = arith.constant 5 : i64
      %one64 = arith.constant 1 : i64
      tle.signal add %comm, %right, %w0, %five group thread : !llvm.ptr
      tle.signal inc %comm, %right, %w2 group thread : !llvm.ptr
      tle.signal_wait %comm, %w0, %five group thread : !llvm.ptr
      tle.signal_wait %comm, %w2, %one64 group thread order seq_cst : !llvm.ptr
      %v = tle.read_signal %comm, %w0 order relaxed : !llvm.ptr
      %zero = arith.constant 0 : i64
      %p = tle.local_pointer %out, %zero : !llvm.ptr
      llvm.store %v, %p : i64, !llvm.ptr
      tle.reset_signal %comm, %w0 : !llvm.ptr
      tle.reset_signal %comm, %w2 : !llvm.ptr
      tle.device_intra_barrier sync %comm, %w0 group thread : !llvm.ptr
      gpu.return
    }
  }
}
