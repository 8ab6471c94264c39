// RUN: tle-opt %s --split-input-file --verify-diagnostics

// The verifier rules of the one-sided ops (TLEOps.td): one case each.

// A put only publishes: acquire would be dropped.
func.func @put_acquire(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{cannot acquire: a put only publishes; use order relaxed, release or acq_rel}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer order acquire : !llvm.ptr
  return
}

// -----

// FlagCX's put fences for release and acq_rel alone: seq_cst would be
// relaxed.
func.func @put_seq_cst(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{cannot acquire: a put only publishes}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer order seq_cst : !llvm.ptr
  return
}

// -----

// signal inc adds 1: a value is a mistake (written in generic form, which
// the custom syntax cannot express).
func.func @put_inc_with_value(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32, %sig: i32) {
  // expected-error @below {{signal inc adds 1 and takes no value; use signal add}}
  "tle.put"(%comm, %buf, %off, %buf, %off, %off, %peer, %sig, %off) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0>, signalKind = 0 : i32}> : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i64, i32, i32, i64) -> ()
  return
}

// -----

// signal add without its value.
func.func @put_add_without_value(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32, %sig: i32) {
  // expected-error @below {{signal add needs a value: signal add %sig, %value}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer signal add %sig : !llvm.ptr
  return
}

// -----

// A signal kind without a word.
func.func @put_kind_without_word(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{a signal kind needs its word and the reverse}}
  "tle.put"(%comm, %buf, %off, %buf, %off, %off, %peer) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, signalKind = 1 : i32}> : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i64, i32) -> ()
  return
}

// -----

// A negative constant size would be a huge unsigned one.
func.func @put_negative_bytes(%comm: i64, %buf: i64, %off: i64, %peer: i32) {
  %n = arith.constant -8 : i64
  // expected-error @below {{bytes must be non-negative}}
  tle.put %comm, %buf[%off], %buf[%off], %n, %peer : i64
  return
}

// -----

func.func @put_negative_dst_offset(%comm: i64, %buf: i64, %n: i64, %peer: i32) {
  %off = arith.constant -1 : i64
  // expected-error @below {{dst offset must be non-negative}}
  tle.put %comm, %buf[%off], %buf[%n], %n, %peer : i64
  return
}

// -----

func.func @put_negative_signal_value(%comm: i64, %buf: i64, %off: i64, %peer: i32, %sig: i32) {
  %v = arith.constant -1 : i64
  // expected-error @below {{signal value must be non-negative}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer signal add %sig, %v : i64
  return
}

// -----

func.func @put_negative_counter(%comm: i64, %buf: i64, %off: i64, %peer: i32) {
  %c = arith.constant -3 : i32
  // expected-error @below {{counter index must be non-negative}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer counter %c : i64
  return
}

// -----

func.func @put_negative_context(%comm: i64, %buf: i64, %off: i64, %peer: i32) {
  %c = arith.constant -1 : i32
  // expected-error @below {{context must be non-negative}}
  tle.put %comm, %buf[%off], %buf[%off], %off, %peer context %c : i64
  return
}

// -----

// A put from a null buffer can only fault.
func.func @put_null_buffer(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{a buffer handle is a null pointer}}
  tle.put %comm, %buf[%off], %null[%off], %off, %peer : !llvm.ptr
  return
}

// -----

func.func @put_null_comm(%mem: i64, %off: i64, %peer: i32) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{comm is a null pointer}}
  tle.put %c0, %mem[%off], %mem[%off], %off, %peer : i64
  return
}

// -----

// The handles share one type.
func.func @put_mixed_handles(%comm: !llvm.ptr, %mem: i64, %off: i64, %peer: i32) {
  // expected-error @below {{all of {comm, dst, src} have same type}}
  "tle.put"(%comm, %mem, %off, %mem, %off, %off, %peer) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> : (!llvm.ptr, i64, i64, i64, i64, i64, i32) -> ()
  return
}

// -----

// A get only observes.
func.func @get_release(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{cannot release: a get only observes; use order relaxed, acquire or acq_rel}}
  tle.get %comm, %buf[%off], %buf[%off], %off, %peer order release : !llvm.ptr
  return
}

// -----

func.func @get_seq_cst(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{cannot release: a get only observes}}
  tle.get %comm, %buf[%off], %buf[%off], %off, %peer order seq_cst : !llvm.ptr
  return
}

// -----

func.func @get_negative_peer(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64) {
  %p = arith.constant -1 : i32
  // expected-error @below {{peer must be non-negative}}
  tle.get %comm, %buf[%off], %buf[%off], %off, %p team world : !llvm.ptr
  return
}

// -----

func.func @get_null_buffer(%comm: i64, %off: i64, %peer: i32) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{a buffer handle is a null pointer}}
  tle.get %comm, %c0[%off], %c0[%off], %off, %peer : i64
  return
}

// -----

func.func @put_value_acquire(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{cannot acquire: a put only publishes}}
  tle.put_value %comm, %buf[%off], %off, %peer order acquire : !llvm.ptr
  return
}

// -----

func.func @put_value_add_without_value(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32, %sig: i32) {
  // expected-error @below {{signal add needs a value}}
  tle.put_value %comm, %buf[%off], %off, %peer signal add %sig : !llvm.ptr
  return
}

// -----

func.func @put_value_negative_signal(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  %s = arith.constant -1 : i32
  // expected-error @below {{signal index must be non-negative}}
  tle.put_value %comm, %buf[%off], %off, %peer signal inc %s : !llvm.ptr
  return
}

// -----

func.func @flush_negative_context(%comm: !llvm.ptr) {
  %c = arith.constant -1 : i32
  // expected-error @below {{context must be non-negative}}
  tle.flush %comm context %c : !llvm.ptr
  return
}

// -----

func.func @flush_null(%x: i32) {
  %null = llvm.mlir.zero : !llvm.ptr
  // expected-error @below {{comm is a null pointer}}
  tle.flush %null : !llvm.ptr
  return
}

// -----

// A counter wait only observes.
func.func @counter_wait_release(%comm: !llvm.ptr, %c: i32, %n: i64) {
  // expected-error @below {{cannot release; use order relaxed, acquire, acq_rel or seq_cst}}
  tle.counter_wait %comm, %c, %n order release : !llvm.ptr
  return
}

// -----

func.func @counter_wait_negative(%comm: !llvm.ptr, %n: i64) {
  %c = arith.constant -1 : i32
  // expected-error @below {{counter index must be non-negative}}
  tle.counter_wait %comm, %c, %n : !llvm.ptr
  return
}

// -----

func.func @read_counter_release(%comm: !llvm.ptr, %c: i32) -> i64 {
  // expected-error @below {{cannot release}}
  %v = tle.read_counter %comm, %c order release : !llvm.ptr
  return %v : i64
}

// -----

func.func @reset_counter_negative(%comm: i64) {
  %c = arith.constant -1 : i32
  // expected-error @below {{counter index must be non-negative}}
  tle.reset_counter %comm, %c : i64
  return
}

// -----

func.func @shadow_increase_negative_delta(%comm: i64, %s: i32) {
  %d = arith.constant -1 : i64
  // expected-error @below {{delta must be non-negative}}
  tle.shadow_increase %comm, %s, %d : i64
  return
}

// -----

func.func @shadow_wait_release(%comm: i64, %s: i32) {
  // expected-error @below {{cannot release}}
  tle.shadow_wait %comm, %s order release : i64
  return
}

// -----

func.func @shadow_wait_negative_signal(%comm: i64) {
  %s = arith.constant -4 : i32
  // expected-error @below {{signal index must be non-negative}}
  tle.shadow_wait %comm, %s : i64
  return
}

// -----

// The signal ops' contexts follow the same rule.
func.func @signal_negative_context(%comm: !llvm.ptr, %p: i32, %s: i32) {
  %c = arith.constant -1 : i32
  // expected-error @below {{context must be non-negative}}
  tle.signal inc %comm, %p, %s context %c : !llvm.ptr
  return
}

// -----

func.func @signal_wait_negative_context(%comm: !llvm.ptr, %s: i32, %n: i64) {
  %c = arith.constant -1 : i32
  // expected-error @below {{context must be non-negative}}
  tle.signal_wait %comm, %s, %n context %c : !llvm.ptr
  return
}

// -----

func.func @reset_signal_negative_context(%comm: !llvm.ptr, %s: i32) {
  %c = arith.constant -1 : i32
  // expected-error @below {{context must be non-negative}}
  tle.reset_signal %comm, %s context %c : !llvm.ptr
  return
}

// -----

// The communicator passed where a transfer's buffer goes: the op's own
// communicator operand says what it is.
func.func @put_comm_as_buffer(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{dst is also the communicator of 'tle.put' itself: dst takes a symmetric buffer's handle (tleMemGetHandle), not a communicator (tleCommGetDevComm)}}
  // expected-note @below {{used as the communicator here}}
  tle.put %comm, %comm[%off], %buf[%off], %off, %peer : !llvm.ptr
  return
}

// -----

func.func @get_comm_as_buffer(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %peer: i32) {
  // expected-error @below {{src is also the communicator of 'tle.get' itself}}
  // expected-note @below {{used as the communicator here}}
  tle.get %comm, %comm[%off], %buf[%off], %off, %peer : !llvm.ptr
  return
}

// -----

// ... and of another op: the put_value's dst is the barrier's communicator.
func.func @put_value_comm_as_buffer(%comm: !llvm.ptr, %buf: !llvm.ptr, %off: i64, %v: i64, %peer: i32) {
  %i = arith.constant 0 : i32
  // expected-note @below {{used as the communicator here}}
  tle.device_intra_barrier sync %buf, %i : !llvm.ptr
  // expected-error @below {{dst is also the communicator of 'tle.device_intra_barrier'}}
  tle.put_value %comm, %buf[%off], %v, %peer : !llvm.ptr
  return
}
