// Split barrier with independent work in between: every thread publishes
// `(rank + 1) * 100 + i` into row `rank` of every peer's `gather`
// (n rows of grid x block i32 elements), arrives (release), computes
// `work[i] = 0 + 1 + ... + i` with a loop that touches no shared data, then
// waits (acquire) and sums column i of its own `gather` into `out[i]`.
//
// The arrive/wait split lets the local work overlap the peers' progress;
// only data published before `arrive` is guaranteed visible after `wait`.
// With n ranks, out[i] = 100 * n * (n + 1) / 2 + n * i.
//
//   tlerun examples/split-arrive-wait.mlir --kernel split --ranks 4 \
//     --block 4 --buffer gather:i32:16 --buffer work:i32:4 \
//     --buffer out:i32:4 --dump out --dump work
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @split(%comm: !llvm.ptr, %gather: !llvm.ptr, %work: !llvm.ptr,
                    %out: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %gdim = gpu.grid_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %total = arith.muli %gdim, %bdim : index
      %gid32 = arith.index_cast %gid : index to i32
      %slot = arith.index_cast %bid : index to i32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index

      %rank32 = tle.intra_rank %comm : !llvm.ptr
      %size32 = tle.intra_size %comm : !llvm.ptr
      %rank = arith.index_cast %rank32 : i32 to index
      %size = arith.index_cast %size32 : i32 to index
      %one = arith.constant 1 : i32
      %c100 = arith.constant 100 : i32
      %rankPlus1 = arith.addi %rank32, %one : i32
      %scaled = arith.muli %rankPlus1, %c100 : i32
      %mine = arith.addi %scaled, %gid32 : i32
      %row = arith.muli %rank, %total : index
      %myElem = arith.addi %row, %gid : index
      %myByte = arith.muli %myElem, %c4 : index
      %myOffset = arith.index_cast %myByte : index to i64
      scf.for %peer = %c0 to %size step %c1 {
        %peer32 = arith.index_cast %peer : index to i32
        %dst = tle.intra_pointer %gather, %myOffset, %peer32 : !llvm.ptr
        llvm.store %mine, %dst : i32, !llvm.ptr
      }

      tle.device_intra_barrier arrive %comm, %slot group block order release : !llvm.ptr

      %zero = arith.constant 0 : i32
      %gidPlus1 = arith.addi %gid, %c1 : index
      %triangle = scf.for %k = %c0 to %gidPlus1 step %c1 iter_args(%acc = %zero) -> (i32) {
        %k32 = arith.index_cast %k : index to i32
        %next = arith.addi %acc, %k32 : i32
        scf.yield %next : i32
      }
      %gidByte = arith.muli %gid, %c4 : index
      %gidOffset = arith.index_cast %gidByte : index to i64
      %workPtr = tle.local_pointer %work, %gidOffset : !llvm.ptr
      llvm.store %triangle, %workPtr : i32, !llvm.ptr

      tle.device_intra_barrier wait %comm, %slot group block order acquire : !llvm.ptr

      %sum = scf.for %q = %c0 to %size step %c1 iter_args(%acc = %zero) -> (i32) {
        %qRow = arith.muli %q, %total : index
        %elem = arith.addi %qRow, %gid : index
        %byte = arith.muli %elem, %c4 : index
        %offset = arith.index_cast %byte : index to i64
        %src = tle.local_pointer %gather, %offset : !llvm.ptr
        %value = llvm.load %src : !llvm.ptr -> i32
        %next = arith.addi %acc, %value : i32
        scf.yield %next : i32
      }
      %outPtr = tle.local_pointer %out, %gidOffset : !llvm.ptr
      llvm.store %sum, %outPtr : i32, !llvm.ptr
      gpu.return
    }
  }
}
