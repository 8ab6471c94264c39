// A read_signal and a reset_signal of one word by two threads of a block
// with nothing between them: which one runs first decides what the read
// returns, on a GPU as here. The reset is a plain write of the word to the
// race checker (docs/emulator.md, "What a signal wait acquires"), so the
// race is reported on every schedule, naming both lines; a block sync
// between them orders them.
//
// RUN: %python %S/sweep.py %s --seeds 12 --kernel buggy --expect "data race on signal word 0 of rank 0" -- --ranks 1 --block 2 --buffer ok:i64:2
// RUN: %python %S/sweep.py %s --seeds 12 --kernel fixed --expect clean -- --ranks 1 --block 2 --buffer ok:i64:2
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @buggy(%comm: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %reader = arith.cmpi eq, %tid, %c0 : index
      scf.if %reader {
        %v = tle.read_signal %comm, %word : !llvm.ptr // site: buggy
        %zero = arith.constant 0 : i64
        %okPtr = tle.local_pointer %ok, %zero : !llvm.ptr
        llvm.store %v, %okPtr : i64, !llvm.ptr
      }
      %resetter = arith.cmpi eq, %tid, %c1 : index
      scf.if %resetter {
        tle.reset_signal %comm, %word : !llvm.ptr // site: buggy
      }
      gpu.return
    }

    gpu.func @fixed(%comm: !llvm.ptr, %ok: !llvm.ptr) kernel {
      %word = arith.constant 0 : i32
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %reader = arith.cmpi eq, %tid, %c0 : index
      scf.if %reader {
        %v = tle.read_signal %comm, %word : !llvm.ptr
        %zero = arith.constant 0 : i64
        %okPtr = tle.local_pointer %ok, %zero : !llvm.ptr
        llvm.store %v, %okPtr : i64, !llvm.ptr
      }
      gpu.barrier
      %resetter = arith.cmpi eq, %tid, %c1 : index
      scf.if %resetter {
        tle.reset_signal %comm, %word : !llvm.ptr
      }
      gpu.return
    }
  }
}
