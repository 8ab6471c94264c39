// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The emulator's floor for emu_sync_loop.mlir (scripts/emu-bench.py
// --floor): the same shape and loop, with one bare block sync (gpu.barrier,
// no TLE call) per round in place of the barrier. A block-group barrier
// syncs the block at least once per round, and each thread then takes at
// least one scheduler step, so no barrier launch of the same shape can cost
// less on this scheduler: tlerun --arg N --block 32 --grid G --ranks R.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync_loop(%comm: !llvm.ptr, %n: i32) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %nn = arith.index_cast %n : i32 to index
      scf.for %i = %c0 to %nn step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
}
