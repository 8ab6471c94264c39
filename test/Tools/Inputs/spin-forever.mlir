// Thread 1 of rank 1 polls a flag nobody sets with a plain load (not atomic,
// not volatile: nothing a compiler or the emulator treats as a poll), a
// loop the emulator cannot see into: only its watchdog ends it.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @spin_forever(%comm: !llvm.ptr, %flag: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %tid = gpu.thread_id x
      %one = arith.constant 1 : i32
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i32
      %zero64 = arith.constant 0 : i64
      %isRank1 = arith.cmpi eq, %rank, %one : i32
      %isThread1 = arith.cmpi eq, %tid, %c1 : index
      %spins = arith.andi %isRank1, %isThread1 : i1
      scf.if %spins {
        %p = tle.local_pointer %flag, %zero64 : !llvm.ptr
        scf.while : () -> () {
          %v = llvm.load %p : !llvm.ptr -> i32
          %unset = arith.cmpi eq, %v, %zero : i32
          scf.condition(%unset)
        } do {
          scf.yield
        }
      }
      gpu.return
    }
  }
}
