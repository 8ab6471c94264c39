// RUN: tle-opt %s --convert-tle-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s

// Rank, size and symmetric-buffer pointers lower to one call each, with the
// handle converted to a generic pointer first.

// CHECK-DAG: declare i32 @flagcxDevCommGetIntraRank(ptr)
// CHECK-DAG: declare i32 @flagcxDevCommGetIntraSize(ptr)
// CHECK-DAG: declare ptr @flagcxGetLocalPointerS(ptr, i64)
// CHECK-DAG: declare ptr @flagcxGetIntraPointerS(ptr, i64, i32)

// CHECK-LABEL: define i32 @rank(
// CHECK-SAME: ptr %[[COMM:[0-9]+]])
// CHECK-NEXT: %[[R:[0-9]+]] = call i32 @flagcxDevCommGetIntraRank(ptr %[[COMM]])
// CHECK-NEXT: ret i32 %[[R]]
llvm.func @rank(%comm: !llvm.ptr) -> i32 {
  %r = tle.intra_rank %comm : !llvm.ptr
  llvm.return %r : i32
}

// CHECK-LABEL: define i32 @size_i64(
// CHECK-SAME: i64 %[[RAW:[0-9]+]])
// CHECK-NEXT: %[[COMM:[0-9]+]] = inttoptr i64 %[[RAW]] to ptr
// CHECK-NEXT: %[[N:[0-9]+]] = call i32 @flagcxDevCommGetIntraSize(ptr %[[COMM]])
// CHECK-NEXT: ret i32 %[[N]]
llvm.func @size_i64(%comm: i64) -> i32 {
  %n = tle.intra_size %comm : i64
  llvm.return %n : i32
}

// CHECK-LABEL: define ptr @local(
// CHECK-SAME: ptr addrspace(1) %[[MEM1:[0-9]+]], i64 %[[OFF:[0-9]+]])
// CHECK-NEXT: %[[MEM:[0-9]+]] = addrspacecast ptr addrspace(1) %[[MEM1]] to ptr
// CHECK-NEXT: %[[P:[0-9]+]] = call ptr @flagcxGetLocalPointerS(ptr %[[MEM]], i64 %[[OFF]])
// CHECK-NEXT: ret ptr %[[P]]
llvm.func @local(%mem: !llvm.ptr<1>, %off: i64) -> !llvm.ptr {
  %p = tle.local_pointer %mem, %off : !llvm.ptr<1>
  llvm.return %p : !llvm.ptr
}

// CHECK-LABEL: define ptr @intra(
// CHECK-SAME: ptr %[[MEM:[0-9]+]], i64 %[[OFF:[0-9]+]], i32 %[[PEER:[0-9]+]])
// CHECK-NEXT: %[[P:[0-9]+]] = call ptr @flagcxGetIntraPointerS(ptr %[[MEM]], i64 %[[OFF]], i32 %[[PEER]])
// CHECK-NEXT: ret ptr %[[P]]
llvm.func @intra(%mem: !llvm.ptr, %off: i64, %peer: i32) -> !llvm.ptr {
  %p = tle.intra_pointer %mem, %off, %peer : !llvm.ptr
  llvm.return %p : !llvm.ptr
}

// A constant offset and peer reach the call as immediates.
// CHECK-LABEL: define ptr @intra_constants(
// CHECK-SAME: i64 %[[RAW:[0-9]+]])
// CHECK-NEXT: %[[MEM:[0-9]+]] = inttoptr i64 %[[RAW]] to ptr
// CHECK-NEXT: %[[P:[0-9]+]] = call ptr @flagcxGetIntraPointerS(ptr %[[MEM]], i64 4096, i32 3)
// CHECK-NEXT: ret ptr %[[P]]
llvm.func @intra_constants(%mem: i64) -> !llvm.ptr {
  %off = llvm.mlir.constant(4096 : i64) : i64
  %peer = llvm.mlir.constant(3 : i32) : i32
  %p = tle.intra_pointer %mem, %off, %peer : i64
  llvm.return %p : !llvm.ptr
}
