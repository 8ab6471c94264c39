// A stateless barrier in a loop: what the device library must make cheap,
// and where a trace that is off must cost nothing (tlec-trace-off.test).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @loop(%comm: !llvm.ptr, %n: i32) kernel {
      %bid = gpu.block_id x
      %slot = arith.index_cast %bid : index to i32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %nn = arith.index_cast %n : i32 to index
      scf.for %i = %c0 to %nn step %c1 {
        tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      }
      gpu.return
    }
  }
}
