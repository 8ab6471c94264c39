// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The emulator's benchmark kernel (scripts/emu-bench.py, issue 30's table):
// block b of every rank syncs on slot b `%n` times (acq_rel, block group),
// nothing else, so a launch costs what the scheduler and the race checker
// spend on barriers: tlerun --arg N --block 32 --grid G --ranks R.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync_loop(%comm: !llvm.ptr, %n: i32) kernel {
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
