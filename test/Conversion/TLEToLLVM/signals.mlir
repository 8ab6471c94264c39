// RUN: tle-opt %s --convert-tle-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s
// RUN: tle-opt %s --convert-tle-to-llvm=abi=unified \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s

// Every signal op lowers to exactly one call of FlagCX's unified signal
// function (docs/abi.md), whichever barrier ABI is selected: team INTRA (0),
// context 0, scope SYSTEM (0), 64 bits, the group's coop kind (thread 0,
// warp 1, block 2) and the order's encoding (relaxed 0, acquire 1, acq_rel 3,
// seq_cst 4), written out here independently of the compiler. Handles are
// converted to generic pointers first.

// CHECK-DAG: declare void @flagcxDevSignalInc(ptr, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevSignalAdd(ptr, i32, i32, i32, i64, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevWaitSignal(ptr, i32, i64, i32, i32, i32, i32)
// CHECK-DAG: declare i64 @flagcxDevReadSignal(ptr, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevResetSignal(ptr, i32, i32)

// CHECK-LABEL: define void @inc_thread(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 0, i32 0)
// CHECK-NEXT: ret void
llvm.func @inc_thread(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  tle.signal inc %comm, %peer, %sig group thread : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @add_thread(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i64 %[[N]], i32 0, i32 0, i32 0)
// CHECK-NEXT: ret void
llvm.func @add_thread(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  tle.signal add %comm, %peer, %sig, %n group thread : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @inc_warp(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 1, i32 0)
// CHECK-NEXT: ret void
llvm.func @inc_warp(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  tle.signal inc %comm, %peer, %sig group warp : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @add_warp(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i64 %[[N]], i32 0, i32 1, i32 0)
// CHECK-NEXT: ret void
llvm.func @add_warp(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  tle.signal add %comm, %peer, %sig, %n group warp : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @inc_block(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 2, i32 0)
// CHECK-NEXT: ret void
llvm.func @inc_block(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  tle.signal inc %comm, %peer, %sig group block : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @add_block(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i64 %[[N]], i32 0, i32 2, i32 0)
// CHECK-NEXT: ret void
llvm.func @add_block(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  tle.signal add %comm, %peer, %sig, %n group block : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_thread_relaxed(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 0, i32 0)
// CHECK-NEXT: ret void
llvm.func @wait_thread_relaxed(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group thread order relaxed : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_thread_acquire(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 0, i32 1)
// CHECK-NEXT: ret void
llvm.func @wait_thread_acquire(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group thread order acquire : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_thread_acq_rel(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 0, i32 3)
// CHECK-NEXT: ret void
llvm.func @wait_thread_acq_rel(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group thread order acq_rel : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_thread_seq_cst(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 0, i32 4)
// CHECK-NEXT: ret void
llvm.func @wait_thread_seq_cst(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group thread order seq_cst : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_warp_relaxed(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 1, i32 0)
// CHECK-NEXT: ret void
llvm.func @wait_warp_relaxed(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group warp order relaxed : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_warp_acquire(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 1, i32 1)
// CHECK-NEXT: ret void
llvm.func @wait_warp_acquire(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group warp order acquire : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_warp_acq_rel(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 1, i32 3)
// CHECK-NEXT: ret void
llvm.func @wait_warp_acq_rel(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group warp order acq_rel : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_warp_seq_cst(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 1, i32 4)
// CHECK-NEXT: ret void
llvm.func @wait_warp_seq_cst(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group warp order seq_cst : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_block_relaxed(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 2, i32 0)
// CHECK-NEXT: ret void
llvm.func @wait_block_relaxed(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group block order relaxed : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_block_acquire(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 2, i32 1)
// CHECK-NEXT: ret void
llvm.func @wait_block_acquire(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group block order acquire : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_block_acq_rel(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 2, i32 3)
// CHECK-NEXT: ret void
llvm.func @wait_block_acq_rel(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group block order acq_rel : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @wait_block_seq_cst(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[LEAST:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[LEAST]], i32 64, i32 0, i32 2, i32 4)
// CHECK-NEXT: ret void
llvm.func @wait_block_seq_cst(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  tle.signal_wait %comm, %sig, %least group block order seq_cst : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define i64 @read_relaxed(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: %[[V:[0-9]+]] = call i64 @flagcxDevReadSignal(ptr %[[COMM]], i32 %[[SIG]], i32 64, i32 0, i32 0)
// CHECK-NEXT: ret i64 %[[V]]
llvm.func @read_relaxed(%comm: !llvm.ptr, %sig: i32) -> i64 {
  %v = tle.read_signal %comm, %sig order relaxed : !llvm.ptr
  llvm.return %v : i64
}

// CHECK-LABEL: define i64 @read_acquire(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: %[[V:[0-9]+]] = call i64 @flagcxDevReadSignal(ptr %[[COMM]], i32 %[[SIG]], i32 64, i32 0, i32 1)
// CHECK-NEXT: ret i64 %[[V]]
llvm.func @read_acquire(%comm: !llvm.ptr, %sig: i32) -> i64 {
  %v = tle.read_signal %comm, %sig order acquire : !llvm.ptr
  llvm.return %v : i64
}

// CHECK-LABEL: define i64 @read_acq_rel(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: %[[V:[0-9]+]] = call i64 @flagcxDevReadSignal(ptr %[[COMM]], i32 %[[SIG]], i32 64, i32 0, i32 3)
// CHECK-NEXT: ret i64 %[[V]]
llvm.func @read_acq_rel(%comm: !llvm.ptr, %sig: i32) -> i64 {
  %v = tle.read_signal %comm, %sig order acq_rel : !llvm.ptr
  llvm.return %v : i64
}

// CHECK-LABEL: define i64 @read_seq_cst(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[SIG:[0-9]+]])
// CHECK-NEXT: %[[V:[0-9]+]] = call i64 @flagcxDevReadSignal(ptr %[[COMM]], i32 %[[SIG]], i32 64, i32 0, i32 4)
// CHECK-NEXT: ret i64 %[[V]]
llvm.func @read_seq_cst(%comm: !llvm.ptr, %sig: i32) -> i64 {
  %v = tle.read_signal %comm, %sig order seq_cst : !llvm.ptr
  llvm.return %v : i64
}

// Defaults: group block (2), order acquire (1).
// CHECK-LABEL: define void @defaults(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 2, i32 0)
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i64 %[[N]], i32 0, i32 2, i32 0)
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[COMM]], i32 %[[SIG]], i64 %[[N]], i32 64, i32 0, i32 2, i32 1)
// CHECK-NEXT: call i64 @flagcxDevReadSignal(ptr %[[COMM]], i32 %[[SIG]], i32 64, i32 0, i32 1)
// CHECK-NEXT: call void @flagcxDevResetSignal(ptr %[[COMM]], i32 0, i32 %[[SIG]])
// CHECK-NEXT: ret void
llvm.func @defaults(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  tle.signal inc %comm, %peer, %sig : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n : !llvm.ptr
  tle.signal_wait %comm, %sig, %n : !llvm.ptr
  %v = tle.read_signal %comm, %sig : !llvm.ptr
  tle.reset_signal %comm, %sig : !llvm.ptr
  llvm.return
}

// Raw i64 and address-space-1 handles; constant operands reach the call as
// immediates.
// CHECK-LABEL: define void @handles(
// CHECK-SAME: i64 %[[RAW:[0-9]+]], ptr addrspace(1) %[[GLOBAL:[0-9]+]])
// CHECK-NEXT: %[[C1:[0-9]+]] = inttoptr i64 %[[RAW]] to ptr
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[C1]], i32 0, i32 1, i32 7, i64 3, i32 0, i32 1, i32 0)
// CHECK-NEXT: %[[C2:[0-9]+]] = addrspacecast ptr addrspace(1) %[[GLOBAL]] to ptr
// CHECK-NEXT: call void @flagcxDevWaitSignal(ptr %[[C2]], i32 7, i64 3, i32 64, i32 0, i32 0, i32 1)
// CHECK-NEXT: %[[C3:[0-9]+]] = inttoptr i64 %[[RAW]] to ptr
// CHECK-NEXT: call void @flagcxDevResetSignal(ptr %[[C3]], i32 0, i32 7)
// CHECK-NEXT: ret void
llvm.func @handles(%raw: i64, %global: !llvm.ptr<1>) {
  %peer = llvm.mlir.constant(1 : i32) : i32
  %sig = llvm.mlir.constant(7 : i32) : i32
  %n = llvm.mlir.constant(3 : i64) : i64
  tle.signal add %raw, %peer, %sig, %n group warp : i64
  tle.signal_wait %global, %sig, %n group thread : !llvm.ptr<1>
  tle.reset_signal %raw, %sig : i64
  llvm.return
}
