// RUN: tle-opt %s --convert-tle-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s
// RUN: tle-opt %s --convert-tle-to-llvm=abi=unified \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s
// RUN: tle-opt %s --convert-to-llvm | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s

// The team ops lower the same under either barrier ABI (the option chooses
// tle.device_intra_barrier's entry points), and through MLIR's generic
// --convert-to-llvm. tle.device_barrier calls
// FlagCX's unified barrier with the team's encoding (INTRA 0, INTER 1,
// WORLD 2), context 0, the group's coop kind, the order and scope SYSTEM
// (0); the grid barrier and multimem stay on intra's own entry points.
// tle.signal passes its team; the queries call FlagCX's intra or world
// query, or TLE's team query for inter. Encodings are written out here
// independently of the compiler (docs/abi.md).

// CHECK-DAG: declare void @flagcxDevBarrierArrive(ptr, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevBarrierWait(ptr, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @flagcxDevBarrierSync(ptr, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: declare void @tleIntraGridBarrierSyncS(ptr, i32, i1, i32)
// CHECK-DAG: declare void @flagcxIntraBarrierSyncS(ptr, i32, i32, i1, i32)
// CHECK-DAG: declare i32 @flagcxDevCommGetRank(ptr)
// CHECK-DAG: declare i32 @flagcxDevCommGetSize(ptr)
// CHECK-DAG: declare i32 @tleDevCommGetTeamRank(ptr, i32)
// CHECK-DAG: declare i32 @tleDevCommGetTeamSize(ptr, i32)

// CHECK-LABEL: define void @barrier_intra(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevBarrierSync(ptr %[[COMM]], i32 0, i32 %[[INDEX]], i32 0, i32 2, i32 3, i32 0)
// CHECK-NEXT: ret void
llvm.func @barrier_intra(%comm: !llvm.ptr, %index: i32) {
  tle.device_barrier sync %comm, %index team intra : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @barrier_inter(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevBarrierArrive(ptr %[[COMM]], i32 1, i32 %[[INDEX]], i32 0, i32 1, i32 2, i32 0)
// CHECK-NEXT: ret void
llvm.func @barrier_inter(%comm: !llvm.ptr, %index: i32) {
  tle.device_barrier arrive %comm, %index team inter group warp order release : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @barrier_world(
// CHECK-SAME: i64 %[[RAW:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// CHECK-NEXT: %[[COMM:[0-9]+]] = inttoptr i64 %[[RAW]] to ptr
// CHECK-NEXT: call void @flagcxDevBarrierWait(ptr %[[COMM]], i32 2, i32 %[[INDEX]], i32 0, i32 0, i32 4, i32 0)
// CHECK-NEXT: ret void
llvm.func @barrier_world(%comm: i64, %index: i32) {
  tle.device_barrier wait %comm, %index team world group thread order seq_cst : i64
  llvm.return
}

// CHECK-LABEL: define void @barrier_intra_grid(
// CHECK-SAME: ptr addrspace(1) %[[GLOBAL:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// CHECK-NEXT: %[[COMM:[0-9]+]] = addrspacecast ptr addrspace(1) %[[GLOBAL]] to ptr
// CHECK-NEXT: call void @tleIntraGridBarrierSyncS(ptr %[[COMM]], i32 %[[INDEX]], i1 false, i32 3)
// CHECK-NEXT: ret void
llvm.func @barrier_intra_grid(%comm: !llvm.ptr<1>, %index: i32) {
  tle.device_barrier sync %comm, %index team intra group grid : !llvm.ptr<1>
  llvm.return
}

// The unified form has no multimem parameter: an intra multimem barrier
// calls the scalar entry point, which has one, rather than dropping it.
// CHECK-LABEL: define void @barrier_intra_multimem(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[INDEX:[0-9]+]])
// CHECK-NEXT: call void @flagcxIntraBarrierSyncS(ptr %[[COMM]], i32 1, i32 %[[INDEX]], i1 true, i32 0)
// CHECK-NEXT: ret void
llvm.func @barrier_intra_multimem(%comm: !llvm.ptr, %index: i32) {
  tle.device_barrier sync %comm, %index team intra group warp order relaxed multimem : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define void @signal_teams(
// CHECK-SAME: ptr %[[COMM:[0-9]+]], i32 %[[PEER:[0-9]+]], i32 %[[SIG:[0-9]+]], i64 %[[N:[0-9]+]])
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 0, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 2, i32 0)
// CHECK-NEXT: call void @flagcxDevSignalInc(ptr %[[COMM]], i32 1, i32 %[[PEER]], i32 %[[SIG]], i32 0, i32 2, i32 0)
// CHECK-NEXT: call void @flagcxDevSignalAdd(ptr %[[COMM]], i32 2, i32 %[[PEER]], i32 %[[SIG]], i64 %[[N]], i32 0, i32 1, i32 0)
// CHECK-NEXT: ret void
llvm.func @signal_teams(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  tle.signal inc %comm, %peer, %sig team intra : !llvm.ptr
  tle.signal inc %comm, %peer, %sig team inter : !llvm.ptr
  tle.signal add %comm, %peer, %sig, %n team world group warp : !llvm.ptr
  llvm.return
}

// CHECK-LABEL: define i32 @queries(
// CHECK-SAME: ptr %[[COMM:[0-9]+]])
// CHECK-NEXT: %[[R0:[0-9]+]] = call i32 @flagcxDevCommGetIntraRank(ptr %[[COMM]])
// CHECK-NEXT: %[[R1:[0-9]+]] = call i32 @tleDevCommGetTeamRank(ptr %[[COMM]], i32 1)
// CHECK-NEXT: %[[R2:[0-9]+]] = call i32 @flagcxDevCommGetRank(ptr %[[COMM]])
// CHECK-NEXT: %[[S0:[0-9]+]] = call i32 @flagcxDevCommGetIntraSize(ptr %[[COMM]])
// CHECK-NEXT: %[[S1:[0-9]+]] = call i32 @tleDevCommGetTeamSize(ptr %[[COMM]], i32 1)
// CHECK-NEXT: %[[S2:[0-9]+]] = call i32 @flagcxDevCommGetSize(ptr %[[COMM]])
llvm.func @queries(%comm: !llvm.ptr) -> i32 {
  %r0 = tle.team_rank %comm team intra : !llvm.ptr
  %r1 = tle.team_rank %comm team inter : !llvm.ptr
  %r2 = tle.team_rank %comm team world : !llvm.ptr
  %s0 = tle.team_size %comm team intra : !llvm.ptr
  %s1 = tle.team_size %comm team inter : !llvm.ptr
  %s2 = tle.team_size %comm team world : !llvm.ptr
  %a = llvm.add %r0, %r1 : i32
  %b = llvm.add %a, %r2 : i32
  %c = llvm.add %b, %s0 : i32
  %d = llvm.add %c, %s1 : i32
  %e = llvm.add %d, %s2 : i32
  llvm.return %e : i32
}
