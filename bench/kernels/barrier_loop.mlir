// The benchmark's tlec row (bench/tlec_bench.py): the barrier a compiler
// emits, in a loop, timed in the kernel like tle-bench-barrier's rows.
// Block b of every rank syncs on slot b: one untimed relaxed round lines
// the ranks up, then kIters acq_rel rounds between two %globaltimer reads.
//
// `times` (i64) holds, per block, a launch counter in times[b] and the
// nanoseconds of launch k in times[grid + k * grid + b], for up to
// (count / grid - 1) launches: `tlerun --repeat R --buffer
// times:i64:<grid * (R + 1)> --dump times` returns every repetition at once.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @barrier_loop(%comm: !llvm.ptr, %times: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %grid = gpu.grid_dim x
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %iters = arith.constant 20000 : index
      %one = arith.constant 1 : i64
      %slot = arith.index_cast %bid : index to i32
      tle.device_intra_barrier sync %comm, %slot group block order relaxed : !llvm.ptr
      %t0 = llvm.inline_asm has_side_effects "mov.u64 $0, %globaltimer;", "=l" : () -> i64
      scf.for %i = %c0 to %iters step %c1 {
        tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      }
      %t1 = llvm.inline_asm has_side_effects "mov.u64 $0, %globaltimer;", "=l" : () -> i64
      %dt = arith.subi %t1, %t0 : i64
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %cntByte = arith.muli %bid, %c8 : index
        %cntOff = arith.index_cast %cntByte : index to i64
        %cntPtr = tle.local_pointer %times, %cntOff : !llvm.ptr
        %k = llvm.load %cntPtr : !llvm.ptr -> i64
        %kIdx = arith.index_cast %k : i64 to index
        // Element grid + k * grid + b, when it lies inside the buffer
        // (local_pointer checks the offset and reports one past the end).
        %kp1 = arith.addi %kIdx, %c1 : index
        %row = arith.muli %kp1, %grid : index
        %elem = arith.addi %row, %bid : index
        %byte = arith.muli %elem, %c8 : index
        %off = arith.index_cast %byte : index to i64
        %dst = tle.local_pointer %times, %off : !llvm.ptr
        llvm.store %dt, %dst : i64, !llvm.ptr
        %k1 = arith.addi %k, %one : i64
        llvm.store %k1, %cntPtr : i64, !llvm.ptr
      }
      gpu.return
    }
  }
}
