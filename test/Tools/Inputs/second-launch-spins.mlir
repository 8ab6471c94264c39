// Syncs, then spins forever on its second launch: every launch reads this
// rank's `count`, and on the second one polls it with a plain load (no
// spin hint) until it changes, which nothing does. For the trace that tlerun leaves
// when the emulator's watchdog ends the process.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @second_spins(%comm: !llvm.ptr, %count: !llvm.ptr) kernel {
      %zero64 = arith.constant 0 : i64
      %p = tle.local_pointer %count, %zero64 : !llvm.ptr
      %n = llvm.load %p : !llvm.ptr -> i32
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      tle.device_intra_barrier sync %comm, %zero group block order acq_rel : !llvm.ptr
      %second = arith.cmpi eq, %n, %one : i32
      scf.if %second {
        scf.while : () -> () {
          %v = llvm.load %p : !llvm.ptr -> i32
          %same = arith.cmpi eq, %v, %one : i32
          scf.condition(%same)
        } do {
          scf.yield
        }
      }
      %next = arith.addi %n, %one : i32
      llvm.store %next, %p : i32, !llvm.ptr
      gpu.return
    }
  }
}
