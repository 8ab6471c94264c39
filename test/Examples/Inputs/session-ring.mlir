// A ring exchange in a loop (test/Examples/session-ring.test): each round,
// every thread writes round * 1000 + rank * 100 + gid into its right
// neighbour's recv[gid], syncs on its block's slot, checks that its own
// recv[gid] holds its left neighbour's value for the round, and syncs
// again before the next round overwrites it. tle-form-barrier-sessions
// makes the loop's barriers a session (the epoch carried beside the loop's
// own count of wrong values); the stateless sync after the loop shares the
// slot. bad[gid] receives the wrong values of all rounds.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @session_ring(%comm: !llvm.ptr, %recv: !llvm.ptr, %bad: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %gid32 = arith.index_cast %gid : index to i32
      %gid64 = arith.index_cast %gid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %gid64, %c4 : i64
      %slot = arith.index_cast %bid : index to i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %c100 = arith.constant 100 : i32
      %c1000 = arith.constant 1000 : i32
      %rp1 = arith.addi %rank, %one : i32
      %right = arith.remui %rp1, %size : i32
      %sm1 = arith.subi %size, %one : i32
      %rps = arith.addi %rank, %sm1 : i32
      %left = arith.remui %rps, %size : i32
      %dst = tle.intra_pointer %recv, %offset, %right : !llvm.ptr
      %src = tle.local_pointer %recv, %offset : !llvm.ptr
      %mineBase = arith.muli %rank, %c100 : i32
      %mine = arith.addi %mineBase, %gid32 : i32
      %theirsBase = arith.muli %left, %c100 : i32
      %theirs = arith.addi %theirsBase, %gid32 : i32
      %c0 = arith.constant 0 : i32
      %c8 = arith.constant 8 : i32
      %c1 = arith.constant 1 : i32
      %wrong = scf.for %r = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i32) : i32 {
        %rk = arith.muli %r, %c1000 : i32
        %v = arith.addi %rk, %mine : i32
        llvm.store %v, %dst : i32, !llvm.ptr
        tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
        %got = llvm.load %src : !llvm.ptr -> i32
        %want = arith.addi %rk, %theirs : i32
        %ne = arith.cmpi ne, %got, %want : i32
        %inc = arith.extui %ne : i1 to i32
        %acc2 = arith.addi %acc, %inc : i32
        tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr
        tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr
        scf.yield %acc2 : i32
      }
      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      %badPtr = tle.local_pointer %bad, %offset : !llvm.ptr
      llvm.store %wrong, %badPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
