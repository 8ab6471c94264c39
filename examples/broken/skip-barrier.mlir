// Deliberately broken: rank 0 skips the barrier that every other rank
// enters, so the others wait for it forever. On the CPU emulator tlerun
// stops at once with a deadlock report naming the waiting ranks, the slot,
// the epoch and the missing peer (rank 0); on GPUs the device library's
// timeout (TLE_BARRIER_TIMEOUT_MS) fires and reports the same.
//
//   tlerun examples/broken/skip-barrier.mlir --kernel skip_barrier --ranks 2
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @skip_barrier(%comm: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %zero = arith.constant 0 : i32
      %enters = arith.cmpi ne, %rank, %zero : i32
      scf.if %enters {
        tle.device_intra_barrier sync %comm, %zero group block order acq_rel : !llvm.ptr
      }
      gpu.return
    }
  }
}
