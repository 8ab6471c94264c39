// tle.device_barrier in tlec's metadata and on the emulator. `mixed` has an
// intra grid barrier on slot 0 inside a helper and a world barrier on
// slot 4: the launch is cooperative and needs 5 slots (each team has its
// own nBarriers slots, so the count is the most any team's indices need).
// `intra` runs on every backend today: team intra, one slot per block, and
// thread 0 of block 0 of each rank records its team rank and size
// (intra: its rank and the node's size) in `out`.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @grid_helper(%comm: !llvm.ptr) {
      %c0 = arith.constant 0 : i32
      tle.device_barrier sync %comm, %c0 team intra group grid : !llvm.ptr
      return
    }
    gpu.func @mixed(%comm: !llvm.ptr) kernel {
      func.call @grid_helper(%comm) : (!llvm.ptr) -> ()
      %c4 = arith.constant 4 : i32
      tle.device_barrier sync %comm, %c4 team world : !llvm.ptr
      gpu.return
    }
    gpu.func @intra(%comm: !llvm.ptr, %out: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %slot = arith.index_cast %bid : index to i32
      %rank = tle.team_rank %comm team intra : !llvm.ptr
      %size = tle.team_size %comm team intra : !llvm.ptr
      %c0 = arith.constant 0 : index
      %b0 = arith.cmpi eq, %bid, %c0 : index
      %t0 = arith.cmpi eq, %tid, %c0 : index
      %first = arith.andi %b0, %t0 : i1
      scf.if %first {
        %zero = arith.constant 0 : i64
        %four = arith.constant 4 : i64
        %p = tle.local_pointer %out, %zero : !llvm.ptr
        %q = tle.local_pointer %out, %four : !llvm.ptr
        llvm.store %rank, %p : i32, !llvm.ptr
        llvm.store %size, %q : i32, !llvm.ptr
      }
      tle.device_barrier sync %comm, %slot team intra : !llvm.ptr
      gpu.return
    }
  }
}
