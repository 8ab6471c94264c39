// RUN: tle-opt %s --convert-tle-to-llvm=sites=true \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s
// RUN: tle-opt %s "--convert-tle-to-llvm=abi=unified sites=true" \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=UNIFIED
// RUN: tle-opt %s --convert-tle-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s --check-prefix=NOSITES

// convert-tle-to-llvm with sites=true (what tlec runs): every barrier,
// session barrier, signal and signal, counter or shadow wait calls the
// ...At twin of its
// entry point with one more, trailing immediate, the op's call-site id:
// tle::abi::siteId("file:line:col") of its first FileLineColLoc (inside a
// fused or name location too), 0 for an op without one. The ids below
// are FNV-1a of the texts, bit 31 cleared. The other ops are unchanged,
// and without the option nothing is.

// CHECK-LABEL: define void @barriers(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// "kernel.mlir:3:5"
// CHECK-NEXT: call void @tleIntraBarrierSyncAt(ptr %[[COMM]], i32 2, i32 %[[INDEX]], i1 false, i32 3, i32 1407955618)
// "kernel.mlir:4:5", in a fused location
// CHECK-NEXT: call void @tleIntraGridBarrierArriveAt(ptr %[[COMM]], i32 %[[INDEX]], i1 false, i32 2, i32 1875798431)
// "kernel.mlir:5:5", under a name
// CHECK-NEXT: call void @tleDevBarrierWaitAt(ptr %[[COMM]], i32 2, i32 %[[INDEX]], i32 0, i32 2, i32 1, i32 0, i32 1550860496)
// No file location: site 0.
// CHECK-NEXT: call void @tleIntraBarrierSyncAt(ptr %[[COMM]], i32 2, i32 %[[INDEX]], i1 false, i32 3, i32 0)
// CHECK-NEXT: ret void
// UNIFIED-LABEL: define void @barriers(
// UNIFIED-NEXT: call void @tleDevBarrierSyncAt(ptr %{{[0-9]+}}, i32 0, i32 %{{[0-9]+}}, i32 0, i32 2, i32 3, i32 0, i32 1407955618)
// NOSITES-LABEL: define void @barriers(
// NOSITES-NEXT: call void @flagcxIntraBarrierSyncS(ptr %{{[0-9]+}}, i32 2, i32 %{{[0-9]+}}, i1 false, i32 3)
// NOSITES-NEXT: call void @tleIntraGridBarrierArriveS(
// NOSITES-NEXT: call void @flagcxDevBarrierWait(
llvm.func @barriers(%comm: !llvm.ptr, %index: i32) {
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr loc("kernel.mlir":3:5)
  tle.device_intra_barrier arrive %comm, %index group grid order release : !llvm.ptr loc(fused["kernel.mlir":4:5, "other.mlir":1:1])
  tle.device_barrier wait %comm, %index team world order acquire : !llvm.ptr loc("wait"("kernel.mlir":5:5))
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr loc(unknown)
  llvm.return
}

// CHECK-LABEL: define i32 @session(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[INDEX:[0-9]+]], i32 %[[EPOCH:[0-9]+]])
// CHECK: call i32 @tleIntraBarrierSessionSyncAt(ptr %[[COMM]], i32 2, i32 %[[INDEX]], i32 3, i32 %[[EPOCH]], i32 718377533)
// NOSITES-LABEL: define i32 @session(
// NOSITES: call i32 @tleIntraBarrierSessionSync(
llvm.func @session(%comm: !llvm.ptr, %index: i32, %epoch: i32) -> i32 {
  %next = tle.session_barrier sync %comm, %index, %epoch : !llvm.ptr loc("kernel.mlir":6:5)
  llvm.return %next : i32
}

// CHECK-LABEL: define void @signals(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[V:[0-9]+]])
// CHECK-NEXT: call void @tleDevSignalIncAt(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 2, i32 0, i32 123666182)
// CHECK-NEXT: call void @tleDevSignalAddAt(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i64 %[[V]], i32 0, i32 2, i32 0, i32 1438922323)
// CHECK-NEXT: call void @tleDevWaitSignalAt(ptr %[[COMM]], i32 %[[SIG]], i64 %[[V]], i32 64, i32 0, i32 2, i32 1, i32 1047152689)
// A read takes no site.
// CHECK-NEXT: call i64 @flagcxDevReadSignal(
// NOSITES-LABEL: define void @signals(
// NOSITES-NEXT: call void @flagcxDevSignalInc(
// NOSITES-NEXT: call void @flagcxDevSignalAdd(
// NOSITES-NEXT: call void @flagcxDevWaitSignal(
llvm.func @signals(%comm: !llvm.ptr, %peer: i32, %sig: i32, %v: i64) {
  tle.signal inc %comm, %peer, %sig : !llvm.ptr loc("kernel.mlir":7:5)
  tle.signal add %comm, %peer, %sig, %v : !llvm.ptr loc("kernel.mlir":8:5)
  tle.signal_wait %comm, %sig, %v : !llvm.ptr loc("kernel.py":42:0)
  %x = tle.read_signal %comm, %sig : !llvm.ptr
  llvm.return
}

// The counter and shadow waits.
// CHECK-LABEL: define void @word_waits(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[I:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @tleDevWaitCounterAt(ptr %[[COMM]], i32 %[[I]], i64 %[[N]], i32 64, i32 0, i32 2, i32 1, i32 1379814852)
// CHECK-NEXT: call void @tleDevWaitSignalMeetShadowAt(ptr %[[COMM]], i32 0, i32 %[[I]], i32 64, i32 2, i32 1, i32 574194842)
// NOSITES-LABEL: define void @word_waits(
// NOSITES-NEXT: call void @flagcxDevWaitCounter(
// NOSITES-NEXT: call void @flagcxDevWaitSignalMeetShadow(
llvm.func @word_waits(%comm: !llvm.ptr, %i: i32, %n: i64) {
  tle.counter_wait %comm, %i, %n : !llvm.ptr loc("kernel.mlir":9:5)
  tle.shadow_wait %comm, %i : !llvm.ptr loc("kernel.mlir":10:5)
  llvm.return
}
