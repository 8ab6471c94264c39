// RUN: tle-opt %s --convert-tle-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s
// RUN: tle-opt %s --convert-tle-to-llvm=abi=unified \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s

// Every one-sided op lowers to exactly one call of FlagCX's unified
// one-sided function (flagcx_device_unified_ir.h; docs/abi.md), whichever
// barrier ABI is selected: the team's encoding (intra 0, inter 1, world 2),
// context 0 unless one is given, the group's coop kind (thread 0, warp 1,
// block 2), scope SYSTEM (0), the order's encoding (relaxed 0, acquire 1,
// release 2, acq_rel 3, seq_cst 4) and 64 bits, written out here
// independently of the compiler. A put picks FlagCX's variant for its
// attached signal and counter, whose words follow the fixed parameters.
// Handles are converted to generic pointers first.

// CHECK-DAG: declare void @flagcxDevPut(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPut_RSigInc(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPut_RSigAdd(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32, i64)
// CHECK-DAG: declare void @flagcxDevPut_LCtrInc(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPut_RSigInc_LCtrInc(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPut_RSigAdd_LCtrInc(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32, i64, i32)
// CHECK-DAG: declare void @flagcxDevGet(ptr, ptr, i64, ptr, i64, i64, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPutValue(ptr, ptr, i64, i64, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPutValue_RSigInc(ptr, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevPutValue_RSigAdd(ptr, ptr, i64, i64, i32, i32, i32, i32, i32, i32, i32, i64)
// CHECK-DAG: declare void @flagcxDevFlush(ptr, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevWaitCounter(ptr, i32, i64, i32, i32, i32, i32)
// CHECK-DAG: declare i64 @flagcxDevReadCounter(ptr, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevResetCounter(ptr, i32, i32)
// CHECK-DAG: declare void @flagcxDevIncreaseSignalShadow(ptr, i32, i32, i64)
// CHECK-DAG: declare void @flagcxDevWaitSignalMeetShadow(ptr, i32, i32, i32, i32, i32)

// CHECK-LABEL: define void @put(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], ptr %[[S:[0-9]+]], i64 %[[O:[0-9]+]], i64 %[[N:[0-9]+]], i32 %[[P:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPut(ptr %[[C]], ptr %[[D]], i64 %[[O]], ptr %[[S]], i64 %[[N]], i64 %[[N]], i32 0, i32 %[[P]], i32 0, i32 2, i32 0, i32 0)
// CHECK-NEXT: ret void
llvm.func @put(%comm: !llvm.ptr, %dst: !llvm.ptr, %src: !llvm.ptr, %off: i64, %n: i64, %peer: i32) {
  tle.put %comm, %dst[%off], %src[%n], %n, %peer : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @put_signal_inc(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[O:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPut_RSigInc(ptr %[[C]], ptr %[[D]], i64 %[[O]], ptr %[[D]], i64 %[[O]], i64 %[[O]], i32 1, i32 %[[P]], i32 0, i32 1, i32 0, i32 2, i32 %[[SIG]])
// CHECK-NEXT: ret void
llvm.func @put_signal_inc(%comm: !llvm.ptr, %mem: !llvm.ptr, %off: i64, %peer: i32, %sig: i32) {
  tle.put %comm, %mem[%off], %mem[%off], %off, %peer team inter signal inc %sig group warp order release : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @put_signal_add(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[O:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[V:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPut_RSigAdd(ptr %[[C]], ptr %[[D]], i64 %[[O]], ptr %[[D]], i64 %[[O]], i64 %[[O]], i32 2, i32 %[[P]], i32 0, i32 0, i32 0, i32 3, i32 %[[SIG]], i64 %[[V]])
// CHECK-NEXT: ret void
llvm.func @put_signal_add(%comm: !llvm.ptr, %mem: !llvm.ptr, %off: i64, %peer: i32, %sig: i32, %v: i64) {
  tle.put %comm, %mem[%off], %mem[%off], %off, %peer team world signal add %sig, %v group thread order acq_rel : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @put_counter(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[O:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[CTR:[0-9]+]], i32 %[[CTX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPut_LCtrInc(ptr %[[C]], ptr %[[D]], i64 %[[O]], ptr %[[D]], i64 %[[O]], i64 %[[O]], i32 0, i32 %[[P]], i32 %[[CTX]], i32 2, i32 0, i32 0, i32 %[[CTR]])
// CHECK-NEXT: ret void
llvm.func @put_counter(%comm: !llvm.ptr, %mem: !llvm.ptr, %off: i64, %peer: i32, %ctr: i32, %ctx: i32) {
  tle.put %comm, %mem[%off], %mem[%off], %off, %peer counter %ctr context %ctx : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @put_signal_inc_counter(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[O:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[SIG:[0-9]+]], i32 %[[CTR:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPut_RSigInc_LCtrInc(ptr %[[C]], ptr %[[D]], i64 %[[O]], ptr %[[D]], i64 %[[O]], i64 %[[O]], i32 2, i32 %[[P]], i32 0, i32 2, i32 0, i32 0, i32 %[[SIG]], i32 %[[CTR]])
// CHECK-NEXT: ret void
llvm.func @put_signal_inc_counter(%comm: !llvm.ptr, %mem: !llvm.ptr, %off: i64, %peer: i32, %sig: i32, %ctr: i32) {
  tle.put %comm, %mem[%off], %mem[%off], %off, %peer team world signal inc %sig counter %ctr : !llvm.ptr
  llvm.return
}

// A raw i64 handle (FlagTree's form) becomes a pointer first.
// CHECK-LABEL: define void @put_signal_add_counter(
// CHECK-SAME: i64 %[[C:[0-9]+]], i64 %[[M:[0-9]+]], i64 %[[O:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[SIG:[0-9]+]], i32 %[[CTR:[0-9]+]])
// CHECK-NEXT: %[[CP:[0-9]+]] = inttoptr i64 %[[C]] to ptr
// CHECK-NEXT: %[[DP:[0-9]+]] = inttoptr i64 %[[M]] to ptr
// CHECK-NEXT: %[[SP:[0-9]+]] = inttoptr i64 %[[M]] to ptr
// CHECK-NEXT: call void @flagcxDevPut_RSigAdd_LCtrInc(ptr %[[CP]], ptr %[[DP]], i64 %[[O]], ptr %[[SP]], i64 %[[O]], i64 %[[O]], i32 0, i32 %[[P]], i32 0, i32 2, i32 0, i32 0, i32 %[[SIG]], i64 %[[O]], i32 %[[CTR]])
// CHECK-NEXT: ret void
llvm.func @put_signal_add_counter(%h: i64, %mem: i64, %off: i64, %peer: i32, %sig: i32, %ctr: i32) {
  tle.put %h, %mem[%off], %mem[%off], %off, %peer signal add %sig, %off counter %ctr : i64
  llvm.return
}

// CHECK-LABEL: define void @get(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[S:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[SO:[0-9]+]], i64 %[[DO:[0-9]+]], i64 %[[N:[0-9]+]], i32 %[[P:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevGet(ptr %[[C]], ptr %[[S]], i64 %[[SO]], ptr %[[D]], i64 %[[DO]], i64 %[[N]], i32 2, i32 %[[P]], i32 0, i32 1, i32 0, i32 1)
// CHECK-NEXT: ret void
llvm.func @get(%comm: !llvm.ptr, %src: !llvm.ptr, %dst: !llvm.ptr, %soff: i64, %doff: i64, %n: i64, %peer: i32) {
  tle.get %comm, %src[%soff], %dst[%doff], %n, %peer team world group warp order acquire : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @put_value(
// CHECK-SAME: ptr %[[C:[0-9]+]], ptr %[[D:[0-9]+]], i64 %[[O:[0-9]+]], i64 %[[V:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[SIG:[0-9]+]], i32 %[[CTX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevPutValue(ptr %[[C]], ptr %[[D]], i64 %[[O]], i64 %[[V]], i32 0, i32 %[[P]], i32 0, i32 2, i32 0, i32 0)
// CHECK-NEXT: call void @flagcxDevPutValue_RSigInc(ptr %[[C]], ptr %[[D]], i64 %[[O]], i64 %[[V]], i32 1, i32 %[[P]], i32 %[[CTX]], i32 0, i32 0, i32 2, i32 %[[SIG]])
// CHECK-NEXT: call void @flagcxDevPutValue_RSigAdd(ptr %[[C]], ptr %[[D]], i64 %[[O]], i64 %[[V]], i32 2, i32 %[[P]], i32 0, i32 1, i32 0, i32 3, i32 %[[SIG]], i64 %[[O]])
// CHECK-NEXT: ret void
llvm.func @put_value(%comm: !llvm.ptr, %dst: !llvm.ptr, %off: i64, %v: i64, %peer: i32, %sig: i32, %ctx: i32) {
  tle.put_value %comm, %dst[%off], %v, %peer : !llvm.ptr
  tle.put_value %comm, %dst[%off], %v, %peer team inter signal inc %sig context %ctx group thread order release : !llvm.ptr
  tle.put_value %comm, %dst[%off], %v, %peer team world signal add %sig, %off group warp order acq_rel : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define i64 @completion(
// CHECK-SAME: ptr %[[C:[0-9]+]], i32 %[[I:[0-9]+]], i64 %[[N:[0-9]+]], i32 %[[CTX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevFlush(ptr %[[C]], i32 0, i32 2, i32 3)
// CHECK-NEXT: call void @flagcxDevFlush(ptr %[[C]], i32 %[[CTX]], i32 1, i32 1)
// CHECK-NEXT: call void @flagcxDevWaitCounter(ptr %[[C]], i32 %[[I]], i64 %[[N]], i32 64, i32 0, i32 2, i32 1)
// CHECK-NEXT: call void @flagcxDevWaitCounter(ptr %[[C]], i32 %[[I]], i64 %[[N]], i32 64, i32 %[[CTX]], i32 0, i32 4)
// CHECK-NEXT: %[[R:[0-9]+]] = call i64 @flagcxDevReadCounter(ptr %[[C]], i32 %[[I]], i32 64, i32 %[[CTX]], i32 0)
// CHECK-NEXT: call void @flagcxDevResetCounter(ptr %[[C]], i32 0, i32 %[[I]])
// CHECK-NEXT: call void @flagcxDevResetCounter(ptr %[[C]], i32 %[[CTX]], i32 %[[I]])
// CHECK-NEXT: call void @flagcxDevIncreaseSignalShadow(ptr %[[C]], i32 0, i32 %[[I]], i64 %[[N]])
// CHECK-NEXT: call void @flagcxDevIncreaseSignalShadow(ptr %[[C]], i32 %[[CTX]], i32 %[[I]], i64 %[[N]])
// CHECK-NEXT: call void @flagcxDevWaitSignalMeetShadow(ptr %[[C]], i32 0, i32 %[[I]], i32 64, i32 2, i32 1)
// CHECK-NEXT: call void @flagcxDevWaitSignalMeetShadow(ptr %[[C]], i32 %[[CTX]], i32 %[[I]], i32 64, i32 1, i32 3)
// CHECK-NEXT: ret i64 %[[R]]
llvm.func @completion(%comm: !llvm.ptr, %i: i32, %n: i64, %ctx: i32) -> i64 {
  tle.flush %comm : !llvm.ptr
  tle.flush %comm context %ctx group warp order acquire : !llvm.ptr
  tle.counter_wait %comm, %i, %n : !llvm.ptr
  tle.counter_wait %comm, %i, %n context %ctx group thread order seq_cst : !llvm.ptr
  %r = tle.read_counter %comm, %i context %ctx order relaxed : !llvm.ptr
  tle.reset_counter %comm, %i : !llvm.ptr
  tle.reset_counter %comm, %i context %ctx : !llvm.ptr
  tle.shadow_increase %comm, %i, %n : !llvm.ptr
  tle.shadow_increase %comm, %i, %n context %ctx : !llvm.ptr
  tle.shadow_wait %comm, %i : !llvm.ptr
  tle.shadow_wait %comm, %i context %ctx group warp order acq_rel : !llvm.ptr
  llvm.return %r : i64
}

// The signal ops pass their context where FlagCX takes it (0 without one:
// signals.mlir).
// CHECK-LABEL: define i64 @signal_contexts(
// CHECK-SAME: ptr %[[C:[0-9]+]], i32 %[[P:[0-9]+]], i32 %[[S:[0-9]+]], i64 %[[N:[0-9]+]], i32 %[[CTX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[C]], i32 0, i32 %[[P]], i32 %[[S]], i32 %[[CTX]], i32 2, i32 0)
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[C]], i32 2, i32 %[[P]], i32 %[[S]], i64 %[[N]], i32 %[[CTX]], i32 1, i32 0)
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[C]], i32 %[[S]], i64 %[[N]], i32 64, i32 %[[CTX]], i32 2, i32 0)
// CHECK-NEXT: %[[V:[0-9]+]] = call i64 @flagcxDevReadSignal(ptr %[[C]], i32 %[[S]], i32 64, i32 %[[CTX]], i32 1)
// CHECK-NEXT: call void @flagcxDevResetSignal(ptr %[[C]], i32 %[[CTX]], i32 %[[S]])
// CHECK-NEXT: ret i64 %[[V]]
llvm.func @signal_contexts(%comm: !llvm.ptr, %p: i32, %s: i32, %n: i64, %ctx: i32) -> i64 {
  tle.signal inc %comm, %p, %s context %ctx : !llvm.ptr
  tle.signal add %comm, %p, %s, %n team world context %ctx group warp : !llvm.ptr
  tle.signal_wait %comm, %s, %n context %ctx order relaxed : !llvm.ptr
  %v = tle.read_signal %comm, %s context %ctx : !llvm.ptr
  tle.reset_signal %comm, %s context %ctx : !llvm.ptr
  llvm.return %v : i64
}
