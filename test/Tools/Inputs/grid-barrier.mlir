// A `group grid` barrier: every block of every rank writes its block id + 1
// into `flags[block]`, the whole grid of every rank meets at slot 0, then
// thread 0 of each block sums all flags of the next rank into `sums[block]`.
// Needs a co-resident (cooperative) launch; slot count 1.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @grid_sum(%comm: !llvm.ptr, %flags: !llvm.ptr, %sums: !llvm.ptr)
        kernel {
      %bid = gpu.block_id x
      %gdim = gpu.grid_dim x
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %isFirst = arith.cmpi eq, %tid, %c0 : index
      %byte = arith.muli %bid, %c4 : index
      %offset = arith.index_cast %byte : index to i64
      scf.if %isFirst {
        %bid32 = arith.index_cast %bid : index to i32
        %flag = arith.addi %bid32, %one : i32
        %dst = tle.local_pointer %flags, %offset : !llvm.ptr
        llvm.store %flag, %dst : i32, !llvm.ptr
      }
      tle.device_intra_barrier sync %comm, %zero group grid order acq_rel : !llvm.ptr
      scf.if %isFirst {
        %rank = tle.intra_rank %comm : !llvm.ptr
        %size = tle.intra_size %comm : !llvm.ptr
        %rankPlus1 = arith.addi %rank, %one : i32
        %next = arith.remui %rankPlus1, %size : i32
        %sum = scf.for %b = %c0 to %gdim step %c1 iter_args(%acc = %zero) -> (i32) {
          %bByte = arith.muli %b, %c4 : index
          %bOffset = arith.index_cast %bByte : index to i64
          %src = tle.intra_pointer %flags, %bOffset, %next : !llvm.ptr
          %v = llvm.load %src : !llvm.ptr -> i32
          %s = arith.addi %acc, %v : i32
          scf.yield %s : i32
        }
        %out = tle.local_pointer %sums, %offset : !llvm.ptr
        llvm.store %sum, %out : i32, !llvm.ptr
      }
      // Keep the flags alive until every peer has read them.
      tle.device_intra_barrier sync %comm, %zero group grid order acq_rel : !llvm.ptr
      gpu.return
    }
  }
}
