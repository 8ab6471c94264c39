// Every team through the device ABI's functions, called directly (the
// dialect's team ops are lowered to them): a barrier on each team, then a
// signal round on each (WORLD: the next world rank; INTER: the next node's
// rank of this rail; INTRA: the next rank of the node), each rank waiting
// for its three words, which it resets before a last WORLD barrier. `out`
// gets the world rank, world size, node and node count. `skip`: world rank
// 5 leaves before an INTER barrier, which its rail peers wait for forever.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @flagcxDevBarrierSync(!llvm.ptr, i32, i32, i32, i32, i32, i32)
    llvm.func @flagcxDevSignalInc(!llvm.ptr, i32, i32, i32, i32, i32, i32)
    llvm.func @flagcxDevWaitSignal(!llvm.ptr, i32, i64, i32, i32, i32, i32)
    llvm.func @flagcxDevResetSignal(!llvm.ptr, i32, i32)
    llvm.func @flagcxDevCommGetRank(!llvm.ptr) -> i32
    llvm.func @flagcxDevCommGetSize(!llvm.ptr) -> i32
    llvm.func @tleDevCommGetTeamRank(!llvm.ptr, i32) -> i32
    llvm.func @tleDevCommGetTeamSize(!llvm.ptr, i32) -> i32
    gpu.func @teams(%comm: !llvm.ptr, %out: !llvm.ptr) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %acqrel = arith.constant 3 : i32
      %acquire = arith.constant 1 : i32
      %bits = arith.constant 64 : i32
      %one64 = arith.constant 1 : i64
      %world = llvm.call @flagcxDevCommGetRank(%comm) : (!llvm.ptr) -> i32
      %size = llvm.call @flagcxDevCommGetSize(%comm) : (!llvm.ptr) -> i32
      %node = llvm.call @tleDevCommGetTeamRank(%comm, %c1) : (!llvm.ptr, i32) -> i32
      %nodes = llvm.call @tleDevCommGetTeamSize(%comm, %c1) : (!llvm.ptr, i32) -> i32
      %local = llvm.call @tleDevCommGetTeamRank(%comm, %c0) : (!llvm.ptr, i32) -> i32
      %perNode = llvm.call @tleDevCommGetTeamSize(%comm, %c0) : (!llvm.ptr, i32) -> i32
      // A barrier on each team (intra, inter, world), group warp, slot 1.
      llvm.call @flagcxDevBarrierSync(%comm, %c0, %c1, %c0, %c1, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevBarrierSync(%comm, %c1, %c1, %c0, %c1, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevBarrierSync(%comm, %c2, %c1, %c0, %c1, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      // Signals: word 0 over WORLD, 1 over INTER, 2 over INTRA.
      %w1 = arith.addi %world, %c1 : i32
      %nextWorld = arith.remui %w1, %size : i32
      %n1 = arith.addi %node, %c1 : i32
      %nextNode = arith.remui %n1, %nodes : i32
      %l1 = arith.addi %local, %c1 : i32
      %nextLocal = arith.remui %l1, %perNode : i32
      llvm.call @flagcxDevSignalInc(%comm, %c2, %nextWorld, %c0, %c0, %c1, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevSignalInc(%comm, %c1, %nextNode, %c1, %c0, %c1, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevSignalInc(%comm, %c0, %nextLocal, %c2, %c0, %c1, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevWaitSignal(%comm, %c0, %one64, %bits, %c0, %c1, %acquire) : (!llvm.ptr, i32, i64, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevWaitSignal(%comm, %c1, %one64, %bits, %c0, %c1, %acquire) : (!llvm.ptr, i32, i64, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevWaitSignal(%comm, %c2, %one64, %bits, %c0, %c1, %acquire) : (!llvm.ptr, i32, i64, i32, i32, i32, i32) -> ()
      llvm.call @flagcxDevResetSignal(%comm, %c0, %c0) : (!llvm.ptr, i32, i32) -> ()
      llvm.call @flagcxDevResetSignal(%comm, %c0, %c1) : (!llvm.ptr, i32, i32) -> ()
      llvm.call @flagcxDevResetSignal(%comm, %c0, %c2) : (!llvm.ptr, i32, i32) -> ()
      llvm.call @flagcxDevBarrierSync(%comm, %c2, %c1, %c0, %c1, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      %tid = gpu.thread_id x
      %t0 = arith.constant 0 : index
      %first = arith.cmpi eq, %tid, %t0 : index
      scf.if %first {
        %o0 = arith.constant 0 : i64
        %o1 = arith.constant 4 : i64
        %o2 = arith.constant 8 : i64
        %o3 = arith.constant 12 : i64
        %p0 = tle.local_pointer %out, %o0 : !llvm.ptr
        %p1 = tle.local_pointer %out, %o1 : !llvm.ptr
        %p2 = tle.local_pointer %out, %o2 : !llvm.ptr
        %p3 = tle.local_pointer %out, %o3 : !llvm.ptr
        llvm.store %world, %p0 : i32, !llvm.ptr
        llvm.store %size, %p1 : i32, !llvm.ptr
        llvm.store %node, %p2 : i32, !llvm.ptr
        llvm.store %nodes, %p3 : i32, !llvm.ptr
      }
      gpu.return
    }
    gpu.func @skip(%comm: !llvm.ptr) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c5 = arith.constant 5 : i32
      %acqrel = arith.constant 3 : i32
      %world = llvm.call @flagcxDevCommGetRank(%comm) : (!llvm.ptr) -> i32
      %stays = arith.cmpi ne, %world, %c5 : i32
      scf.if %stays {
        llvm.call @flagcxDevBarrierSync(%comm, %c1, %c0, %c0, %c0, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
      }
      gpu.return
    }
  }
}
