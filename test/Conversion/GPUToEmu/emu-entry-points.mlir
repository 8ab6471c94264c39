// RUN: tle-opt %s --tle-emu-entry-points | FileCheck %s

// A marked kernel body becomes internal and gets the packed entry
// __tle_entry.NAME(void **args) and its parameter list __tle_params.NAME.

// CHECK-LABEL: llvm.func internal @__tle_kernel.k(%{{.*}}: !llvm.ptr, %{{.*}}: i32)
// CHECK-NOT: tle.emu_kernel
llvm.func @__tle_kernel.k(%comm: !llvm.ptr, %n: i32) attributes {tle.emu_kernel = "k", tle.emu_params = "ptr,i32"} {
  llvm.return
}
// CHECK-LABEL: llvm.func @__tle_entry.k(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> i32
// CHECK: llvm.call @__tle_kernel.k(%[[A0]], %[[A1]]) : (!llvm.ptr, i32) -> ()
// CHECK: llvm.return
// CHECK: llvm.mlir.global external constant @__tle_params.k("ptr,i32\00")

// Unmarked functions are left alone.
// CHECK-LABEL: llvm.func @helper()
// CHECK-NOT: __tle_entry.helper
llvm.func @helper() {
  llvm.return
}
