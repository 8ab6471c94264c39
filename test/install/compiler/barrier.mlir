// Input of the installed-package test: one barrier and one rank query,
// lowered by tle-lower --convert-tle-to-llvm to calls of the device ABI.
llvm.func @kernel(%comm: !llvm.ptr, %index: i32) -> i32 {
  tle.device_intra_barrier sync %comm, %index group block order acq_rel : !llvm.ptr
  %rank = tle.intra_rank %comm : !llvm.ptr
  llvm.return %rank : i32
}
