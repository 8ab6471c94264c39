// RUN: tle-opt %s --verify-roundtrip | FileCheck %s
// RUN: tle-opt %s --mlir-print-op-generic | tle-opt | FileCheck %s
// RUN: tle-opt %s --cse --canonicalize | FileCheck %s

// The printed form of the signal ops: every group and order, defaults
// (group block; order acquire) elided whether written or not, every handle
// type, and runtime indices.

// CHECK-LABEL: func.func @signal(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[PEER:.*]]: i32, %[[SIG:.*]]: i32, %[[N:.*]]: i64)
func.func @signal(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] : !llvm.ptr
  tle.signal inc %comm, %peer, %sig : !llvm.ptr
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] : !llvm.ptr
  tle.signal inc %comm, %peer, %sig group block : !llvm.ptr
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] group thread : !llvm.ptr
  tle.signal inc %comm, %peer, %sig group thread : !llvm.ptr
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[PEER]], %[[SIG]] group warp : !llvm.ptr
  tle.signal inc %comm, %peer, %sig group warp : !llvm.ptr
  // CHECK-NEXT: tle.signal add %[[COMM]], %[[PEER]], %[[SIG]], %[[N]] : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n : !llvm.ptr
  // CHECK-NEXT: tle.signal add %[[COMM]], %[[PEER]], %[[SIG]], %[[N]] group thread : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n group thread : !llvm.ptr
  // CHECK-NEXT: tle.signal add %[[COMM]], %[[PEER]], %[[SIG]], %[[N]] group warp : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n group warp : !llvm.ptr
  return
}

// CHECK-LABEL: func.func @signal_wait(
// CHECK-SAME: %[[COMM:.*]]: i64, %[[SIG:.*]]: i32, %[[LEAST:.*]]: i64)
func.func @signal_wait(%comm: i64, %sig: i32, %least: i64) {
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[SIG]], %[[LEAST]] : i64
  tle.signal_wait %comm, %sig, %least : i64
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[SIG]], %[[LEAST]] : i64
  tle.signal_wait %comm, %sig, %least group block order acquire : i64
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[SIG]], %[[LEAST]] group thread order relaxed : i64
  tle.signal_wait %comm, %sig, %least group thread order relaxed : i64
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[SIG]], %[[LEAST]] group warp order acq_rel : i64
  tle.signal_wait %comm, %sig, %least group warp order acq_rel : i64
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[SIG]], %[[LEAST]] order seq_cst : i64
  tle.signal_wait %comm, %sig, %least order seq_cst : i64
  return
}

// CHECK-LABEL: func.func @read_and_reset(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr<1>, %[[SIG:.*]]: i32)
func.func @read_and_reset(%comm: !llvm.ptr<1>, %sig: i32) -> (i64, i64, i64, i64) {
  // CHECK-NEXT: %[[A:.*]] = tle.read_signal %[[COMM]], %[[SIG]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[B:.*]] = tle.read_signal %[[COMM]], %[[SIG]] : !llvm.ptr<1>
  // CHECK-NEXT: %[[C:.*]] = tle.read_signal %[[COMM]], %[[SIG]] order relaxed : !llvm.ptr<1>
  // CHECK-NEXT: %[[D:.*]] = tle.read_signal %[[COMM]], %[[SIG]] order seq_cst : !llvm.ptr<1>
  // CHECK-NEXT: tle.reset_signal %[[COMM]], %[[SIG]] : !llvm.ptr<1>
  // CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]]
  %a = tle.read_signal %comm, %sig : !llvm.ptr<1>
  %b = tle.read_signal %comm, %sig order acquire : !llvm.ptr<1>
  %c = tle.read_signal %comm, %sig order relaxed : !llvm.ptr<1>
  %d = tle.read_signal %comm, %sig order seq_cst : !llvm.ptr<1>
  tle.reset_signal %comm, %sig : !llvm.ptr<1>
  return %a, %b, %c, %d : i64, i64, i64, i64
}

// In a kernel, with indices derived from the block id and constant values;
// unknown attributes are kept. Two reads of the same word are never merged
// (the third RUN line applies CSE): peers change the word at any time.
// CHECK-LABEL: gpu.func @in_kernel(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr)
gpu.module @kernels {
  gpu.func @in_kernel(%comm: !llvm.ptr) kernel {
    // CHECK: %[[BID:.*]] = gpu.block_id x
    // CHECK: %[[SIG:.*]] = arith.index_cast %[[BID]] : index to i32
    // CHECK: tle.signal add %[[COMM]], %{{.*}}, %[[SIG]], %{{.*}} {note = "x"} : !llvm.ptr
    // CHECK: tle.signal_wait %[[COMM]], %[[SIG]], %{{.*}} group warp : !llvm.ptr
    // CHECK: tle.read_signal %[[COMM]], %[[SIG]] : !llvm.ptr
    // CHECK: tle.read_signal %[[COMM]], %[[SIG]] : !llvm.ptr
    %bid = gpu.block_id x
    %sig = arith.index_cast %bid : index to i32
    %peer = arith.constant 1 : i32
    %four = arith.constant 4 : i64
    tle.signal add %comm, %peer, %sig, %four {note = "x"} : !llvm.ptr
    tle.signal_wait %comm, %sig, %four group warp : !llvm.ptr
    %a = tle.read_signal %comm, %sig : !llvm.ptr
    %b = tle.read_signal %comm, %sig : !llvm.ptr
    gpu.return
  }
}
