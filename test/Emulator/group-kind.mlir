// Ranks that disagree on a slot's group: rank 0 calls the barrier on slot
// 0 as a block group, the other ranks as a warp group (every warp of the
// block on the same slot would be a misuse too). The group kind decides
// who takes part and who signals; a round in which ranks disagree is
// reported with both lines. The same group on every rank is clean.
//
// RUN: %python %S/sweep.py %s --kernel buggy --expect "ranks use slot 0 with different groups" -- --ranks 2 --block 32
// RUN: %python %S/sweep.py %s --kernel fixed --expect clean -- --ranks 2 --block 32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr) kernel {
      %slot = arith.constant 0 : i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %zero = arith.constant 0 : i32
      %first = arith.cmpi eq, %rank, %zero : i32
      scf.if %first {
        tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr // site: buggy
      } else {
        tle.device_intra_barrier sync %comm, %slot group warp order acq_rel : !llvm.ptr // site: buggy
      }
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr) kernel {
      %slot = arith.constant 0 : i32
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      gpu.return
    }
  }
}
