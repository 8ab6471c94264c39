// Succeeds once, then deadlocks: every launch reads and increments this
// rank's `count` (one thread per rank), and rank 0 skips the barrier when
// the count says it is the second launch. For tlerun's trace of a run whose
// failing launch is not the first.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @second_fails(%comm: !llvm.ptr, %count: !llvm.ptr) kernel {
      %zero64 = arith.constant 0 : i64
      %p = tle.local_pointer %count, %zero64 : !llvm.ptr
      %n = llvm.load %p : !llvm.ptr -> i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %true = arith.constant true
      %isRank0 = arith.cmpi eq, %rank, %zero : i32
      %second = arith.cmpi eq, %n, %one : i32
      %skip = arith.andi %isRank0, %second : i1
      %enter = arith.xori %skip, %true : i1
      scf.if %enter {
        tle.device_intra_barrier sync %comm, %zero group block order acq_rel : !llvm.ptr
      }
      %next = arith.addi %n, %one : i32
      llvm.store %next, %p : i32, !llvm.ptr
      gpu.return
    }
  }
}
