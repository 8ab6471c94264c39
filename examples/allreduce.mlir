// One-shot all-reduce over symmetric buffers: every rank sums element i of
// every rank's `in` (read directly from the peers' memory) into its own
// `out`. One element per thread: the buffers hold grid x block elements.
//
// The first barrier makes every rank's `in` (written before the launch, or
// by an earlier kernel) visible to all peers; the second keeps a rank from
// returning, and a later launch from rewriting `in`, while a peer still
// reads it. Each block uses its own slot (index = block id), so blocks of
// the same id on every rank form one barrier.
//
//   tlerun examples/allreduce.mlir --kernel allreduce --ranks 4 --grid 2 \
//     --block 32 --buffer in:i32:64:iota --buffer out:i32:64 --dump out
//
// prints out[i] == 4 * i for every rank.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @allreduce(%comm: !llvm.ptr, %in: !llvm.ptr, %out: !llvm.ptr)
        kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %gid64 = arith.index_cast %gid : index to i64
      %c4 = arith.constant 4 : i64
      %offset = arith.muli %gid64, %c4 : i64
      %slot = arith.index_cast %bid : index to i32

      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr

      %size = tle.intra_size %comm : !llvm.ptr
      %n = arith.index_cast %size : i32 to index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i32
      %sum = scf.for %peer = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
        %peer32 = arith.index_cast %peer : index to i32
        %src = tle.intra_pointer %in, %offset, %peer32 : !llvm.ptr
        %value = llvm.load %src : !llvm.ptr -> i32
        %next = arith.addi %acc, %value : i32
        scf.yield %next : i32
      }
      %dst = tle.local_pointer %out, %offset : !llvm.ptr
      llvm.store %sum, %dst : i32, !llvm.ptr

      tle.device_intra_barrier sync %comm, %slot group block order acq_rel : !llvm.ptr
      gpu.return
    }
  }
}
