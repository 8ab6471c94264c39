// Doubles every element of an f64 buffer (one element per thread); no
// barrier. For the buffer type, init and dump tests of tlerun.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%comm: !llvm.ptr, %data: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %c8 = arith.constant 8 : index
      %byte = arith.muli %gid, %c8 : index
      %offset = arith.index_cast %byte : index to i64
      %p = tle.local_pointer %data, %offset : !llvm.ptr
      %v = llvm.load %p : !llvm.ptr -> f64
      %two = arith.constant 2.0 : f64
      %w = arith.mulf %v, %two : f64
      llvm.store %w, %p : f64, !llvm.ptr
      gpu.return
    }
  }
}
