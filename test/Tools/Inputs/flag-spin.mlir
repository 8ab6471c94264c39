// A hand-written flag: thread 0 of rank 0 stores a value into rank 1's
// `data`, then sets rank 1's `flag`; thread 0 of rank 1 spins on its own
// flag, then reads `data`. `acquire`: the flag is an atomic release store
// and an atomic acquire load, which order the data (clean). `volatile`: a
// plain store and a volatile load, which order nothing (a data race on the
// flag itself). Either way the spin completes: every atomic or volatile
// load yields to the emulator's scheduler, so the setter gets to run.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @acquire(%comm: !llvm.ptr, %data: !llvm.ptr, %flag: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %zero64 = arith.constant 0 : i64
      %first = arith.cmpi eq, %tid, %c0 : index
      %isRank0 = arith.cmpi eq, %rank, %zero : i32
      %isRank1 = arith.cmpi eq, %rank, %one : i32
      %sets = arith.andi %first, %isRank0 : i1
      %waits = arith.andi %first, %isRank1 : i1
      scf.if %sets {
        %d = tle.intra_pointer %data, %zero64, %one : !llvm.ptr
        %c42 = arith.constant 42 : i32
        llvm.store %c42, %d : i32, !llvm.ptr
        %f = tle.intra_pointer %flag, %zero64, %one : !llvm.ptr
        llvm.store %one, %f atomic release {alignment = 4 : i64} : i32, !llvm.ptr
      }
      scf.if %waits {
        %f = tle.local_pointer %flag, %zero64 : !llvm.ptr
        scf.while : () -> () {
          %v = llvm.load %f atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32
          %unset = arith.cmpi eq, %v, %zero : i32
          scf.condition(%unset)
        } do {
          scf.yield
        }
        %d = tle.local_pointer %data, %zero64 : !llvm.ptr
        %got = llvm.load %d : !llvm.ptr -> i32
        %c4 = arith.constant 4 : i64
        %out = tle.local_pointer %data, %c4 : !llvm.ptr
        llvm.store %got, %out : i32, !llvm.ptr
      }
      gpu.return
    }

    gpu.func @volatile(%comm: !llvm.ptr, %data: !llvm.ptr, %flag: !llvm.ptr) kernel {
      %rank = tle.intra_rank %comm : !llvm.ptr
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %zero64 = arith.constant 0 : i64
      %first = arith.cmpi eq, %tid, %c0 : index
      %isRank0 = arith.cmpi eq, %rank, %zero : i32
      %isRank1 = arith.cmpi eq, %rank, %one : i32
      %sets = arith.andi %first, %isRank0 : i1
      %waits = arith.andi %first, %isRank1 : i1
      scf.if %sets {
        %d = tle.intra_pointer %data, %zero64, %one : !llvm.ptr
        %c42 = arith.constant 42 : i32
        llvm.store %c42, %d : i32, !llvm.ptr
        %f = tle.intra_pointer %flag, %zero64, %one : !llvm.ptr
        llvm.store %one, %f : i32, !llvm.ptr
      }
      scf.if %waits {
        %f = tle.local_pointer %flag, %zero64 : !llvm.ptr
        scf.while : () -> () {
          %v = llvm.load volatile %f : !llvm.ptr -> i32
          %unset = arith.cmpi eq, %v, %zero : i32
          scf.condition(%unset)
        } do {
          scf.yield
        }
        %d = tle.local_pointer %data, %zero64 : !llvm.ptr
        %got = llvm.load %d : !llvm.ptr -> i32
        %c4 = arith.constant 4 : i64
        %out = tle.local_pointer %data, %c4 : !llvm.ptr
        llvm.store %got, %out : i32, !llvm.ptr
      }
      gpu.return
    }
  }
}
