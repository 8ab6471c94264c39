// The one-GPU benchmark's tlec row (bench/SharedBench.cu, row `tlec`): the
// barrier a compiler emits, in a loop, timed in the kernel like the other
// rows. Block b syncs on slot %base + b (the row's own slots, as the C++
// rows take theirs): one untimed relaxed round lines the ranks up, then
// %iters acq_rel rounds between two %globaltimer reads; thread 0 stores the
// nanoseconds into out[b]. tlec's tle-form-barrier-sessions
// turns the loop's barriers into a session (the untimed one, outside the
// loop, stays stateless); test/Examples/session-loop-ptx.test checks the
// PTX of the loop.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shared_loop(%comm: !llvm.ptr, %out: !llvm.ptr, %iters: i32, %base: i32) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.index_cast %iters : i32 to index
      %b32 = arith.index_cast %bid : index to i32
      %slot = arith.addi %base, %b32 : i32
      tle.device_intra_barrier sync %comm, %slot group block order relaxed : !llvm.ptr
      %t0 = llvm.inline_asm has_side_effects "mov.u64 $0, %globaltimer;", "=l" : () -> i64
      scf.for %i = %c0 to %n step %c1 {
        tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      }
      %t1 = llvm.inline_asm has_side_effects "mov.u64 $0, %globaltimer;", "=l" : () -> i64
      %dt = arith.subi %t1, %t0 : i64
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %b = arith.index_cast %bid : index to i64
        %dst = llvm.getelementptr %out[%b] : (!llvm.ptr, i64) -> !llvm.ptr, i64
        llvm.store %dt, %dst : i64, !llvm.ptr
      }
      gpu.return
    }
  }
}
