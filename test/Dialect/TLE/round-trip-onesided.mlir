// RUN: tle-opt %s --verify-roundtrip | FileCheck %s
// RUN: tle-opt %s --mlir-print-op-generic | tle-opt | FileCheck %s
// RUN: tle-opt %s --cse --canonicalize | FileCheck %s

// The printed form of the one-sided ops: every attached signal and counter
// combination of a put, every team, group and order, defaults (team intra;
// group block; order relaxed for puts and gets, acq_rel for a flush,
// acquire for the waits and reads; no context) elided whether written or
// not, both handle types, and runtime values throughout. Two puts or reads
// are never merged by CSE.

// CHECK-LABEL: func.func @put(
// CHECK-SAME: %[[COMM:[^:]*]]: !llvm.ptr, %[[DST:[^:]*]]: !llvm.ptr, %[[SRC:[^:]*]]: !llvm.ptr, %[[OFF:[^:]*]]: i64, %[[N:[^:]*]]: i64, %[[PEER:[^:]*]]: i32, %[[SIG:[^:]*]]: i32, %[[CTR:[^:]*]]: i32, %[[CTX:[^:]*]]: i32)
func.func @put(%comm: !llvm.ptr, %dst: !llvm.ptr, %src: !llvm.ptr, %off: i64,
               %n: i64, %peer: i32, %sig: i32, %ctr: i32, %ctx: i32) {
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer team intra group block order relaxed : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] signal inc %[[SIG]] : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer signal inc %sig : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] team inter signal add %[[SIG]], %[[N]] group warp : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer team inter signal add %sig, %n group warp : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] team world counter %[[CTR]] order release : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer team world counter %ctr order release : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] signal inc %[[SIG]] counter %[[CTR]] context %[[CTX]] group thread order acq_rel : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer signal inc %sig counter %ctr context %ctx group thread order acq_rel : !llvm.ptr
  // CHECK-NEXT: tle.put %[[COMM]], %[[DST]][%[[OFF]]], %[[SRC]][%[[OFF]]], %[[N]], %[[PEER]] team world signal add %[[SIG]], %[[N]] counter %[[CTR]] : !llvm.ptr
  tle.put %comm, %dst[%off], %src[%off], %n, %peer team world signal add %sig, %n counter %ctr : !llvm.ptr
  return
}

// CHECK-LABEL: func.func @get_and_value(
// CHECK-SAME: %[[COMM:[^:]*]]: i64, %[[MEM:[^:]*]]: i64, %[[OFF:[^:]*]]: i64, %[[V:[^:]*]]: i64, %[[PEER:[^:]*]]: i32, %[[SIG:[^:]*]]: i32, %[[CTX:[^:]*]]: i32)
func.func @get_and_value(%comm: i64, %mem: i64, %off: i64, %v: i64,
                         %peer: i32, %sig: i32, %ctx: i32) {
  // CHECK-NEXT: tle.get %[[COMM]], %[[MEM]][%[[OFF]]], %[[MEM]][%[[V]]], %[[V]], %[[PEER]] : i64
  tle.get %comm, %mem[%off], %mem[%v], %v, %peer order relaxed : i64
  // CHECK-NEXT: tle.get %[[COMM]], %[[MEM]][%[[OFF]]], %[[MEM]][%[[OFF]]], %[[V]], %[[PEER]] team world context %[[CTX]] group warp order acquire : i64
  tle.get %comm, %mem[%off], %mem[%off], %v, %peer team world context %ctx group warp order acquire : i64
  // CHECK-NEXT: tle.put_value %[[COMM]], %[[MEM]][%[[OFF]]], %[[V]], %[[PEER]] : i64
  tle.put_value %comm, %mem[%off], %v, %peer : i64
  // CHECK-NEXT: tle.put_value %[[COMM]], %[[MEM]][%[[OFF]]], %[[V]], %[[PEER]] team inter signal inc %[[SIG]] order release : i64
  tle.put_value %comm, %mem[%off], %v, %peer team inter signal inc %sig order release : i64
  // CHECK-NEXT: tle.put_value %[[COMM]], %[[MEM]][%[[OFF]]], %[[V]], %[[PEER]] signal add %[[SIG]], %[[V]] context %[[CTX]] group thread : i64
  tle.put_value %comm, %mem[%off], %v, %peer signal add %sig, %v context %ctx group thread : i64
  return
}

// CHECK-LABEL: func.func @completion(
// CHECK-SAME: %[[COMM:[^:]*]]: !llvm.ptr, %[[IDX:[^:]*]]: i32, %[[N:[^:]*]]: i64, %[[CTX:[^:]*]]: i32)
func.func @completion(%comm: !llvm.ptr, %idx: i32, %n: i64, %ctx: i32) -> (i64, i64) {
  // CHECK-NEXT: tle.flush %[[COMM]] : !llvm.ptr
  tle.flush %comm group block order acq_rel : !llvm.ptr
  // CHECK-NEXT: tle.flush %[[COMM]] context %[[CTX]] group warp order acquire : !llvm.ptr
  tle.flush %comm context %ctx group warp order acquire : !llvm.ptr
  // CHECK-NEXT: tle.counter_wait %[[COMM]], %[[IDX]], %[[N]] : !llvm.ptr
  tle.counter_wait %comm, %idx, %n order acquire : !llvm.ptr
  // CHECK-NEXT: tle.counter_wait %[[COMM]], %[[IDX]], %[[N]] context %[[CTX]] group thread order seq_cst : !llvm.ptr
  tle.counter_wait %comm, %idx, %n context %ctx group thread order seq_cst : !llvm.ptr
  // CHECK-NEXT: %[[A:.*]] = tle.read_counter %[[COMM]], %[[IDX]] : !llvm.ptr
  %a = tle.read_counter %comm, %idx : !llvm.ptr
  // CHECK-NEXT: %[[B:.*]] = tle.read_counter %[[COMM]], %[[IDX]] context %[[CTX]] order relaxed : !llvm.ptr
  %b = tle.read_counter %comm, %idx context %ctx order relaxed : !llvm.ptr
  // CHECK-NEXT: tle.reset_counter %[[COMM]], %[[IDX]] : !llvm.ptr
  tle.reset_counter %comm, %idx : !llvm.ptr
  // CHECK-NEXT: tle.reset_counter %[[COMM]], %[[IDX]] context %[[CTX]] : !llvm.ptr
  tle.reset_counter %comm, %idx context %ctx : !llvm.ptr
  // CHECK-NEXT: tle.shadow_increase %[[COMM]], %[[IDX]], %[[N]] : !llvm.ptr
  tle.shadow_increase %comm, %idx, %n : !llvm.ptr
  // CHECK-NEXT: tle.shadow_increase %[[COMM]], %[[IDX]], %[[N]] context %[[CTX]] : !llvm.ptr
  tle.shadow_increase %comm, %idx, %n context %ctx : !llvm.ptr
  // CHECK-NEXT: tle.shadow_wait %[[COMM]], %[[IDX]] : !llvm.ptr
  tle.shadow_wait %comm, %idx group block order acquire : !llvm.ptr
  // CHECK-NEXT: tle.shadow_wait %[[COMM]], %[[IDX]] context %[[CTX]] group warp order relaxed : !llvm.ptr
  tle.shadow_wait %comm, %idx context %ctx group warp order relaxed : !llvm.ptr
  // CHECK-NEXT: return %[[A]], %[[B]] : i64, i64
  return %a, %b : i64, i64
}

// The signal ops take the same optional context.
// CHECK-LABEL: func.func @signal_contexts(
// CHECK-SAME: %[[COMM:[^:]*]]: !llvm.ptr, %[[P:[^:]*]]: i32, %[[S:[^:]*]]: i32, %[[N:[^:]*]]: i64, %[[CTX:[^:]*]]: i32)
func.func @signal_contexts(%comm: !llvm.ptr, %p: i32, %s: i32, %n: i64, %ctx: i32) -> i64 {
  // CHECK-NEXT: tle.signal inc %[[COMM]], %[[P]], %[[S]] context %[[CTX]] : !llvm.ptr
  tle.signal inc %comm, %p, %s context %ctx : !llvm.ptr
  // CHECK-NEXT: tle.signal add %[[COMM]], %[[P]], %[[S]], %[[N]] team world context %[[CTX]] group warp : !llvm.ptr
  tle.signal add %comm, %p, %s, %n team world context %ctx group warp : !llvm.ptr
  // CHECK-NEXT: tle.signal_wait %[[COMM]], %[[S]], %[[N]] context %[[CTX]] order relaxed : !llvm.ptr
  tle.signal_wait %comm, %s, %n context %ctx order relaxed : !llvm.ptr
  // CHECK-NEXT: %[[V:.*]] = tle.read_signal %[[COMM]], %[[S]] context %[[CTX]] : !llvm.ptr
  %v = tle.read_signal %comm, %s context %ctx : !llvm.ptr
  // CHECK-NEXT: tle.reset_signal %[[COMM]], %[[S]] context %[[CTX]] : !llvm.ptr
  tle.reset_signal %comm, %s context %ctx : !llvm.ptr
  return %v : i64
}
