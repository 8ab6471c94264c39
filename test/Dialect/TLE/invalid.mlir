// RUN: tle-opt %s --split-input-file --verify-diagnostics

// A negative constant index (arith.constant) is rejected: the ABI takes the
// slot index unsigned.
func.func @negative_index_arith(%comm: !llvm.ptr) {
  %c = arith.constant -1 : i32
  // expected-error @below {{index must be non-negative}}
  tle.device_intra_barrier sync %comm, %c : !llvm.ptr
  return
}

// -----

// The same through llvm.mlir.constant.
llvm.func @negative_index_llvm(%comm: i64) {
  %c = llvm.mlir.constant(-7 : i32) : i32
  // expected-error @below {{index must be non-negative}}
  tle.device_intra_barrier arrive %comm, %c group warp : i64
  llvm.return
}

// -----

// multimem with group thread buys nothing over unicast.
func.func @multimem_thread(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{multimem is meaningless with group thread}}
  tle.device_intra_barrier sync %comm, %index group thread multimem : !llvm.ptr
  return
}

// -----

// An arrive only publishes: a pure acquire order would silently be relaxed.
func.func @arrive_acquire(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{arrive cannot acquire; use order relaxed, release, acq_rel or seq_cst}}
  tle.device_intra_barrier arrive %comm, %index order acquire : !llvm.ptr
  return
}

// -----

// A wait only observes: a pure release order would silently be relaxed.
func.func @wait_release(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{wait cannot release; use order relaxed, acquire, acq_rel or seq_cst}}
  tle.device_intra_barrier wait %comm, %index group grid order release : !llvm.ptr
  return
}

// -----

// A null communicator pointer can only fault on the device.
func.func @null_comm_ptr(%index: i32) {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  tle.device_intra_barrier sync %null, %index : !llvm.ptr
  return
}

// -----

// Address 0 as a raw i64 communicator is the same mistake.
func.func @null_comm_i64(%index: i32) {
  %zero = arith.constant 0 : i64
  // expected-error @below {{comm is a null pointer}}
  tle.device_intra_barrier sync %zero, %index : i64
  return
}

// -----

// The index must be an i32.
// expected-note @below {{prior use here}}
func.func @index_i64(%comm: !llvm.ptr, %index: i64) {
  // expected-error @below {{use of value '%index' expects different type than prior uses: 'i32' vs 'i64'}}
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr
  return
}

// -----

// The communicator is a pointer or an i64, nothing else.
func.func @comm_i32(%comm: i32, %index: i32) {
  // expected-error @below {{operand #0 must be LLVM pointer or 64-bit address}}
  tle.device_intra_barrier sync %comm, %index : i32
  return
}

// -----

// Unknown barrier kinds are rejected by the parser.
func.func @bad_kind(%comm: !llvm.ptr, %index: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [arrive, wait, sync]}}
  tle.device_intra_barrier signal %comm, %index : !llvm.ptr
  return
}

// -----

// `grid` and `block` are groups, `tile_span` is not (FlagCX's coopKind 3).
func.func @bad_group(%comm: !llvm.ptr, %index: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'group' [thread, warp, block, grid]}}
  tle.device_intra_barrier sync %comm, %index group tile_span : !llvm.ptr
  return
}

// -----

// Unknown memory orders are rejected by the parser.
func.func @bad_order(%comm: !llvm.ptr, %index: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'order' [relaxed, acquire, release, acq_rel, seq_cst]}}
  tle.device_intra_barrier sync %comm, %index order consume : !llvm.ptr
  return
}

// -----

// intra_rank on a null communicator.
func.func @rank_null_comm() -> i32 {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  %r = tle.intra_rank %null : !llvm.ptr
  return %r : i32
}

// -----

// intra_size on a null communicator.
func.func @size_null_comm() -> i32 {
  %zero = llvm.mlir.constant(0 : i64) : i64
  // expected-error @below {{comm is a null pointer}}
  %n = tle.intra_size %zero : i64
  return %n : i32
}

// -----

// local_pointer with a negative constant offset.
func.func @local_negative_offset(%mem: !llvm.ptr) -> !llvm.ptr {
  %off = arith.constant -8 : i64
  // expected-error @below {{offset must be non-negative}}
  %p = tle.local_pointer %mem, %off : !llvm.ptr
  return %p : !llvm.ptr
}

// -----

// local_pointer on a null buffer handle.
func.func @local_null_mem(%off: i64) -> !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr<1>
  // expected-error @below {{mem is a null pointer}}
  %p = tle.local_pointer %null, %off : !llvm.ptr<1>
  return %p : !llvm.ptr
}

// -----

// intra_pointer with a negative constant offset.
func.func @intra_negative_offset(%mem: i64, %peer: i32) -> !llvm.ptr {
  %off = arith.constant -1 : i64
  // expected-error @below {{offset must be non-negative}}
  %p = tle.intra_pointer %mem, %off, %peer : i64
  return %p : !llvm.ptr
}

// -----

// intra_pointer with a negative constant peer.
func.func @intra_negative_peer(%mem: !llvm.ptr, %off: i64) -> !llvm.ptr {
  %peer = arith.constant -2 : i32
  // expected-error @below {{peer must be non-negative}}
  %p = tle.intra_pointer %mem, %off, %peer : !llvm.ptr
  return %p : !llvm.ptr
}

// -----

// intra_pointer on a null buffer handle.
func.func @intra_null_mem(%off: i64, %peer: i32) -> !llvm.ptr {
  %null = arith.constant 0 : i64
  // expected-error @below {{mem is a null pointer}}
  %p = tle.intra_pointer %null, %off, %peer : i64
  return %p : !llvm.ptr
}

// -----

// The peer must be an i32.
// expected-note @below {{prior use here}}
func.func @intra_peer_i64(%mem: !llvm.ptr, %off: i64, %peer: i64) -> !llvm.ptr {
  // expected-error @below {{use of value '%peer' expects different type than prior uses: 'i32' vs 'i64'}}
  %p = tle.intra_pointer %mem, %off, %peer : !llvm.ptr
  return %p : !llvm.ptr
}

// -----

// A signal inc adds 1: a value is a mistake (inc or add was meant?).
func.func @signal_inc_with_value(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i64) {
  // expected-error @below {{inc adds 1 and takes no value; use add}}
  tle.signal inc %comm, %peer, %sig, %n : !llvm.ptr
  return
}

// -----

// A signal add without its value.
func.func @signal_add_without_value(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  // expected-error @below {{add needs a value: tle.signal add %comm, %peer, %sig, %value}}
  tle.signal add %comm, %peer, %sig : !llvm.ptr
  return
}

// -----

// A negative constant addend would wrap the word backwards.
func.func @signal_negative_value(%comm: i64, %peer: i32, %sig: i32) {
  %n = arith.constant -1 : i64
  // expected-error @below {{value must be non-negative: a signal only adds}}
  tle.signal add %comm, %peer, %sig, %n group warp : i64
  return
}

// -----

// A negative constant peer.
func.func @signal_negative_peer(%comm: !llvm.ptr, %sig: i32) {
  %peer = llvm.mlir.constant(-1 : i32) : i32
  // expected-error @below {{peer must be non-negative}}
  tle.signal inc %comm, %peer, %sig : !llvm.ptr
  return
}

// -----

// A negative constant signal index (the ABI takes it unsigned).
func.func @signal_negative_index(%comm: !llvm.ptr, %peer: i32) {
  %sig = arith.constant -3 : i32
  // expected-error @below {{signal index must be non-negative}}
  tle.signal inc %comm, %peer, %sig : !llvm.ptr
  return
}

// -----

// A signal on a null communicator.
func.func @signal_null_comm(%peer: i32, %sig: i32) {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  tle.signal inc %null, %peer, %sig : !llvm.ptr
  return
}

// -----

// Signals have no grid group.
func.func @signal_grid(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'group' [thread, warp, block]}}
  tle.signal inc %comm, %peer, %sig group grid : !llvm.ptr
  return
}

// -----

// Unknown signal kinds are rejected by the parser.
func.func @signal_bad_kind(%comm: !llvm.ptr, %peer: i32, %sig: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [inc, add]}}
  tle.signal set %comm, %peer, %sig : !llvm.ptr
  return
}

// -----

// The addend is an i64.
// expected-note @below {{prior use here}}
func.func @signal_value_i32(%comm: !llvm.ptr, %peer: i32, %sig: i32, %n: i32) {
  // expected-error @below {{use of value '%n' expects different type than prior uses: 'i64' vs 'i32'}}
  tle.signal add %comm, %peer, %sig, %n : !llvm.ptr
  return
}

// -----

// A wait only observes: a release order would silently be dropped.
func.func @signal_wait_release(%comm: !llvm.ptr, %sig: i32, %least: i64) {
  // expected-error @below {{'tle.signal_wait' op cannot release; use order relaxed, acquire, acq_rel or seq_cst}}
  tle.signal_wait %comm, %sig, %least order release : !llvm.ptr
  return
}

// -----

// A wait on a negative constant index.
func.func @signal_wait_negative_index(%comm: i64, %least: i64) {
  %sig = llvm.mlir.constant(-1 : i32) : i32
  // expected-error @below {{signal index must be non-negative}}
  tle.signal_wait %comm, %sig, %least group thread : i64
  return
}

// -----

// A wait on address 0.
func.func @signal_wait_null_comm(%sig: i32, %least: i64) {
  %zero = arith.constant 0 : i64
  // expected-error @below {{comm is a null pointer}}
  tle.signal_wait %zero, %sig, %least : i64
  return
}

// -----

// The value waited for is an i64.
// expected-note @below {{prior use here}}
func.func @signal_wait_least_i32(%comm: !llvm.ptr, %sig: i32, %least: i32) {
  // expected-error @below {{use of value '%least' expects different type than prior uses: 'i64' vs 'i32'}}
  tle.signal_wait %comm, %sig, %least : !llvm.ptr
  return
}

// -----

// A read only observes, like a wait.
func.func @read_signal_release(%comm: !llvm.ptr, %sig: i32) -> i64 {
  // expected-error @below {{'tle.read_signal' op cannot release; use order relaxed, acquire, acq_rel or seq_cst}}
  %v = tle.read_signal %comm, %sig order release : !llvm.ptr
  return %v : i64
}

// -----

// A read of a negative constant index.
func.func @read_signal_negative_index(%comm: !llvm.ptr) -> i64 {
  %sig = arith.constant -1 : i32
  // expected-error @below {{signal index must be non-negative}}
  %v = tle.read_signal %comm, %sig : !llvm.ptr
  return %v : i64
}

// -----

// A reset of a negative constant index.
func.func @reset_signal_negative_index(%comm: !llvm.ptr) {
  %sig = arith.constant -5 : i32
  // expected-error @below {{signal index must be non-negative}}
  tle.reset_signal %comm, %sig : !llvm.ptr
  return
}

// -----

// A reset on a null communicator.
func.func @reset_signal_null_comm(%sig: i32) {
  %null = llvm.mlir.zero : !llvm.ptr<1>
  // expected-error @below {{comm is a null pointer}}
  tle.reset_signal %null, %sig : !llvm.ptr<1>
  return
}

// -----

// tle.device_barrier has tle.device_intra_barrier's rules: a negative slot.
func.func @team_negative_index(%comm: !llvm.ptr) {
  %c = arith.constant -1 : i32
  // expected-error @below {{index must be non-negative}}
  tle.device_barrier sync %comm, %c team world : !llvm.ptr
  return
}

// -----

// ... and a wait that would drop its release half.
func.func @team_wait_release(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{wait cannot release; use order relaxed, acquire, acq_rel or seq_cst}}
  tle.device_barrier wait %comm, %index team inter order release : !llvm.ptr
  return
}

// -----

// The grid barrier spans one node's co-resident launch: intra only.
func.func @team_grid_inter(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{group grid is only available with team intra; use group block (or warp) for team inter}}
  tle.device_barrier sync %comm, %index team inter group grid : !llvm.ptr
  return
}

// -----

func.func @team_grid_world(%comm: i64, %index: i32) {
  // expected-error @below {{group grid is only available with team intra; use group block (or warp) for team world}}
  tle.device_barrier arrive %comm, %index team world group grid : i64
  return
}

// -----

// NVLink multicast reaches the GPUs of one node.
func.func @team_multimem_world(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{multimem is only available with team intra}}
  tle.device_barrier sync %comm, %index team world group warp multimem : !llvm.ptr
  return
}

// -----

// The team is required: a barrier that silently spanned one node would
// pass before the other nodes arrived.
func.func @team_missing(%comm: !llvm.ptr, %index: i32) {
  // expected-error @below {{expected 'team'}}
  tle.device_barrier sync %comm, %index : !llvm.ptr
  return
}

// -----

// An unknown team is a parse error naming the cases.
func.func @team_unknown(%comm: !llvm.ptr, %index: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'team' [intra, inter, world]}}
  tle.device_barrier sync %comm, %index team node : !llvm.ptr
  return
}

// -----

// A team query of a null communicator can only fault.
llvm.func @team_rank_null() -> i32 {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  %r = tle.team_rank %null team world : !llvm.ptr
  llvm.return %r : i32
}

// -----

func.func @team_size_null() -> i32 {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{comm is a null pointer}}
  %n = tle.team_size %c0 team inter : i64
  return %n : i32
}

// -----

// tle.signal with a team keeps its rules.
func.func @signal_team_negative_peer(%comm: !llvm.ptr, %sig: i32) {
  %c = arith.constant -2 : i32
  // expected-error @below {{peer must be non-negative}}
  tle.signal inc %comm, %c, %sig team world : !llvm.ptr
  return
}

// -----

// Sessions serve the thread, warp and block groups; the grid barrier
// keeps its own state.
func.func @session_open_grid(%comm: !llvm.ptr, %slot: i32) -> i32 {
  // expected-error @below {{sessions serve groups thread, warp and block}}
  %e = tle.session_open %comm, %slot group grid : !llvm.ptr
  return %e : i32
}

// -----

// A session's halves keep the barrier's order rules.
func.func @session_arrive_acquire(%comm: !llvm.ptr, %slot: i32, %e: i32) -> i32 {
  // expected-error @below {{arrive cannot acquire}}
  %n = tle.session_barrier arrive %comm, %slot, %e order acquire : !llvm.ptr
  return %n : i32
}

// -----

func.func @session_close_negative(%comm: !llvm.ptr, %e: i32) {
  %c = arith.constant -1 : i32
  // expected-error @below {{index must be non-negative}}
  tle.session_close %comm, %c, %e : !llvm.ptr
  return
}

// -----

func.func @session_barrier_null(%slot: i32, %e: i32) -> i32 {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  %n = tle.session_barrier sync %null, %slot, %e : !llvm.ptr
  return %n : i32
}

// -----

// The communicator passed where a buffer handle goes: both are !llvm.ptr,
// but the barrier's use says which one %comm is.
func.func @comm_as_buffer(%comm: !llvm.ptr, %peer: i32) -> !llvm.ptr {
  %c0 = arith.constant 0 : i64
  %i = arith.constant 0 : i32
  // expected-note @below {{used as the communicator here}}
  tle.device_intra_barrier sync %comm, %i : !llvm.ptr
  // expected-error @below {{mem is also the communicator of 'tle.device_intra_barrier': mem takes a symmetric buffer's handle (tleMemGetHandle), not a communicator (tleCommGetDevComm)}}
  %p = tle.intra_pointer %comm, %c0, %peer : !llvm.ptr
  return %p : !llvm.ptr
}

// -----

// The same for tle.local_pointer, with the communicator used by a signal.
func.func @comm_as_local_buffer(%comm: !llvm.ptr, %peer: i32) -> !llvm.ptr {
  %c0 = arith.constant 0 : i64
  %s = arith.constant 1 : i32
  // expected-note @below {{used as the communicator here}}
  tle.signal inc %comm, %peer, %s : !llvm.ptr
  // expected-error @below {{mem is also the communicator of 'tle.signal'}}
  %p = tle.local_pointer %comm, %c0 : !llvm.ptr
  return %p : !llvm.ptr
}
