//===- TLEOps.td - Operations of the tle dialect -----------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The ops of the `tle` dialect: the device-side intra-node barrier and its
// sibling over any team, the rank and size queries of the communicator,
// pointers into symmetric buffers, point-to-point signals, and one-sided
// data movement (put, get, put-value, flush, counters, signal shadows).
// Their textual form is a contract: tests and front ends outside the
// compiler parse and print it.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DIALECT_TLE_IR_TLEOPS_TD
#define TLE_DIALECT_TLE_IR_TLEOPS_TD

include "tle/Dialect/TLE/IR/TLEDialect.td"
include "tle/Dialect/TLE/IR/TLEEnums.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TLE_Op<string mnemonic, list<Trait> traits = []>
    : Op<TLE_Dialect, mnemonic, traits>;

/// A device communicator or symmetric-buffer handle: a pointer in any address
/// space, or a raw 64-bit address as FlagTree passes it.
def TLE_HandleType : AnyTypeOf<[LLVM_AnyPointer, I64],
    "LLVM pointer or 64-bit address">;

def TLE_DeviceIntraBarrierOp : TLE_Op<"device_intra_barrier"> {
  let summary = "Barrier across the GPUs of one node, executed by a kernel";
  let description = [{
    Synchronizes the calling cooperative group with the same barrier slot on
    every other rank of the node's communicator `comm` (`tle.device_barrier`
    is the same barrier over a chosen team). The kind says which half of
    the barrier the call performs:

    - `arrive`: the group synchronizes, then signals every peer that
      this rank reached the next epoch of slot `index` (the release half of
      `order`).
    - `wait`: waits until every peer reached that epoch (the acquire half of
      `order`), advances the slot's epoch, and the group synchronizes.
    - `sync`: `arrive` then `wait`.

    `index` names the barrier slot. It is a runtime `i32` (typically derived
    from the block id), so different blocks can use different slots; an index
    at or beyond the communicator's slot count is reported by the runtime.

    `group` says who executes the call together: `thread`, `warp`, `block`
    (the default) or `grid` (every CTA of the launch; requires a co-resident
    launch). `order` is one of `relaxed`, `acquire`, `release`, `acq_rel`
    (the default) and `seq_cst`. `multimem` asks for NVLink multicast
    signalling; the runtime may fall back to unicast. Defaults are elided
    when printing.

    Verifier rules (the orders, groups and teams are the device ABI's
    rules, `runtime/device/include/tle/rules.def`, which the Triton front
    ends apply too; docs/abi.md, "Rules"):
    - a constant `index` must be non-negative (the ABI takes it unsigned);
    - `multimem` is rejected with `group thread`: a multicast store issued by
      one thread buys nothing over unicast stores, so the flag would only
      suggest a speed-up that cannot happen;
    - `arrive` with `order acquire` is rejected: an arrive only publishes, it
      never observes peers, so a pure acquire order would be silently
      weakened to relaxed; write `relaxed` or `acq_rel` (or `release`);
    - `wait` with `order release` is rejected for the symmetric reason: a
      wait only observes; write `relaxed` or `acq_rel` (or `acquire`);
    - a constant null `comm` is rejected.

    Example:

    ```mlir
    %bid = gpu.block_id x
    %index = arith.index_cast %bid : index to i32
    tle.device_intra_barrier sync %comm, %index : !llvm.ptr
    tle.device_intra_barrier arrive %comm, %index group warp order release multimem : !llvm.ptr<1>
    tle.device_intra_barrier wait %raw, %c0 group grid order seq_cst : i64
    ```
  }];

  let arguments = (ins
    TLE_BarrierKind:$kind,
    TLE_HandleType:$comm,
    I32:$index,
    DefaultValuedAttr<TLE_BarrierGroup,
                      "::mlir::tle::BarrierGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acq_rel">:$order,
    UnitAttr:$multimem
  );

  let assemblyFormat = [{
    $kind $comm `,` $index (`group` $group^)? (`order` $order^)?
    (`multimem` $multimem^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_DeviceBarrierOp : TLE_Op<"device_barrier"> {
  let summary = "Barrier across the ranks of a team, executed by a kernel";
  let description = [{
    `tle.device_intra_barrier` over any team of the communicator `comm`:
    `intra` (the ranks of this node), `inter` (the same local rank on every
    node: a rail) or `world` (every rank). Kind, `index`, `group`, `order`
    and `multimem` mean what they mean there; each team has its own
    `nBarriers` slots, so slot 3 of `world` and slot 3 of `intra` are
    different barriers. `team` is required: a barrier that silently
    defaulted to one node would pass before the other nodes arrived.

    Verifier rules: those of `tle.device_intra_barrier`, and
    - `group grid` only with `team intra`: the grid barrier's co-resident
      launch spans the GPUs of one node, and its entry points are intra's;
    - `multimem` only with `team intra`: NVLink multicast reaches the GPUs
      of one node.

    Example:

    ```mlir
    tle.device_barrier sync %comm, %index team world : !llvm.ptr
    tle.device_barrier arrive %comm, %index team inter group warp order release : i64
    tle.device_barrier wait %comm, %c0 team intra group grid : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_BarrierKind:$kind,
    TLE_HandleType:$comm,
    I32:$index,
    TLE_Team:$team,
    DefaultValuedAttr<TLE_BarrierGroup,
                      "::mlir::tle::BarrierGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acq_rel">:$order,
    UnitAttr:$multimem
  );

  let assemblyFormat = [{
    $kind $comm `,` $index `team` $team (`group` $group^)? (`order` $order^)?
    (`multimem` $multimem^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Barrier sessions: what tle-form-barrier-sessions turns the barriers of a
// loop into. The slot's epoch is an SSA value that the loop carries.
//===----------------------------------------------------------------------===//

def TLE_SessionOpenOp : TLE_Op<"session_open"> {
  let summary = "Open a barrier session on a slot: check it, read its epoch";
  let description = [{
    Checks the communicator `comm` and slot `index` for `group` as a
    barrier would, and returns the slot's epoch. The session's barriers
    (`tle.session_barrier`) take the epoch and return the next one; the
    session ends with `tle.session_close`, which writes the epoch back.
    Between the open and the close, the slot is used through the session
    only: a stateless barrier on it would read an epoch word the session
    has not written. `tle-form-barrier-sessions` forms sessions from the
    barriers of a loop; they can also be written by hand.

    Verifier rules: those of `tle.device_intra_barrier` on `comm` and
    `index`, and `group` is `thread`, `warp` or `block` (the grid barrier
    keeps its own state).

    Example:

    ```mlir
    %e0 = tle.session_open %comm, %index : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$index,
    DefaultValuedAttr<TLE_BarrierGroup,
                      "::mlir::tle::BarrierGroup::block">:$group
  );
  let results = (outs I32:$epoch);

  let assemblyFormat = [{
    $comm `,` $index (`group` $group^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_SessionBarrierOp : TLE_Op<"session_barrier"> {
  let summary = "A barrier half of a session, on the epoch the caller carries";
  let description = [{
    `tle.device_intra_barrier` on the slot of a session opened by
    `tle.session_open` with the same `comm`, `index` and `group`, with
    the slot's epoch taken from `epoch` instead of from memory. Returns the
    epoch after the half: `epoch` after an `arrive`, `epoch + 1` after a
    `wait` or `sync`. Nothing is read from or written to the slot's epoch
    word, which is what makes a loop of these cost only the flag exchange.

    Verifier rules: those of `tle.device_intra_barrier`, and no `group
    grid`.

    Example:

    ```mlir
    %e1 = tle.session_barrier sync %comm, %index, %e0 order acq_rel : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_BarrierKind:$kind,
    TLE_HandleType:$comm,
    I32:$index,
    I32:$epoch,
    DefaultValuedAttr<TLE_BarrierGroup,
                      "::mlir::tle::BarrierGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acq_rel">:$order
  );
  let results = (outs I32:$next);

  let assemblyFormat = [{
    $kind $comm `,` $index `,` $epoch (`group` $group^)? (`order` $order^)?
    attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_SessionCloseOp : TLE_Op<"session_close"> {
  let summary = "End a barrier session: write its epoch back to the slot";
  let description = [{
    Ends the session on slot `index`: the group's first thread writes
    `epoch` (the last `tle.session_barrier`'s result) to the slot's epoch
    word, and the group synchronizes, so that stateless barriers, later
    sessions and later launches of the kernel (graph replays included)
    continue from it.

    Example:

    ```mlir
    tle.session_close %comm, %index, %e1 : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$index,
    I32:$epoch,
    DefaultValuedAttr<TLE_BarrierGroup,
                      "::mlir::tle::BarrierGroup::block">:$group
  );

  let assemblyFormat = [{
    $comm `,` $index `,` $epoch (`group` $group^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

class TLE_CommQueryOp<string mnemonic>
    : TLE_Op<mnemonic, [MemoryEffects<[MemRead]>]> {
  let arguments = (ins TLE_HandleType:$comm);
  let results = (outs I32:$result);
  let assemblyFormat = "$comm attr-dict `:` type($comm)";
  let hasVerifier = 1;
}

def TLE_IntraRankOp : TLE_CommQueryOp<"intra_rank"> {
  let summary = "This GPU's rank within the node";
  let description = [{
    Returns the intra-node rank (`0 .. size-1`) of the calling GPU in the
    communicator `comm`. It reads the communicator, so it is not hoisted
    across writes to it. A constant null `comm` is rejected.

    Example:

    ```mlir
    %rank = tle.intra_rank %comm : !llvm.ptr
    ```
  }];
}

def TLE_IntraSizeOp : TLE_CommQueryOp<"intra_size"> {
  let summary = "Number of GPUs (ranks) of the node's communicator";
  let description = [{
    Returns the number of ranks of the communicator `comm`. It reads the
    communicator, so it is not hoisted across writes to it. A constant null
    `comm` is rejected.

    Example:

    ```mlir
    %size = tle.intra_size %comm : i64
    ```
  }];
}

/// This rank, or the number of ranks, of a team.
class TLE_TeamQueryOp<string mnemonic>
    : TLE_Op<mnemonic, [MemoryEffects<[MemRead]>]> {
  let arguments = (ins TLE_HandleType:$comm, TLE_Team:$team);
  let results = (outs I32:$result);
  let assemblyFormat = "$comm `team` $team attr-dict `:` type($comm)";
  let hasVerifier = 1;
}

def TLE_TeamRankOp : TLE_TeamQueryOp<"team_rank"> {
  let summary = "This rank's index in a team";
  let description = [{
    Returns the calling GPU's index (`0 .. size-1`) in team `team` of the
    communicator `comm`: `intra`, its rank in the node (as
    `tle.intra_rank`); `inter`, its node's index (its rank in its rail);
    `world`, its world rank, `node * intraSize + intraRank`. It reads the
    communicator, so it is not hoisted across writes to it. A constant null
    `comm` is rejected.

    Example:

    ```mlir
    %rank = tle.team_rank %comm team world : !llvm.ptr
    ```
  }];
}

def TLE_TeamSizeOp : TLE_TeamQueryOp<"team_size"> {
  let summary = "Number of ranks of a team";
  let description = [{
    Returns the number of ranks of team `team` of the communicator `comm`:
    `intra`, the GPUs of the node (as `tle.intra_size`); `inter`, the
    number of nodes; `world`, every rank. It reads the communicator, so it
    is not hoisted across writes to it. A constant null `comm` is rejected.

    Example:

    ```mlir
    %nodes = tle.team_size %comm team inter : i64
    ```
  }];
}

def TLE_LocalPointerOp : TLE_Op<"local_pointer", [MemoryEffects<[MemRead]>]> {
  let summary = "This rank's address inside a symmetric buffer";
  let description = [{
    Returns a generic (address space 0) pointer to byte `offset` of this
    rank's copy of the symmetric buffer whose handle is `mem`.

    Verifier rules: a constant `offset` must be non-negative; a constant null
    `mem` is rejected, and so is a `mem` that another tle op uses as its
    communicator (a communicator and a buffer handle are both pointers: only
    their uses tell them apart).

    Example:

    ```mlir
    %p = tle.local_pointer %mem, %offset : !llvm.ptr
    ```
  }];
  let arguments = (ins TLE_HandleType:$mem, I64:$offset);
  let results = (outs LLVM_DefaultPointer:$result);
  let assemblyFormat = "$mem `,` $offset attr-dict `:` type($mem)";
  let hasVerifier = 1;
}

def TLE_IntraPointerOp : TLE_Op<"intra_pointer", [MemoryEffects<[MemRead]>]> {
  let summary = "A peer's address inside a symmetric buffer";
  let description = [{
    Returns a generic (address space 0) pointer, valid on this GPU, to byte
    `offset` of rank `peer`'s copy of the symmetric buffer whose handle is
    `mem`. Loads and stores through it go over NVLink/PCIe P2P.

    Verifier rules: a constant `offset` and a constant `peer` must be
    non-negative; a constant null `mem` is rejected, and so is a `mem` that
    another tle op uses as its communicator.

    Example:

    ```mlir
    %peer = arith.constant 1 : i32
    %p = tle.intra_pointer %mem, %offset, %peer : !llvm.ptr
    ```
  }];
  let arguments = (ins TLE_HandleType:$mem, I64:$offset, I32:$peer);
  let results = (outs LLVM_DefaultPointer:$result);
  let assemblyFormat = "$mem `,` $offset `,` $peer attr-dict `:` type($mem)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Signals
//===----------------------------------------------------------------------===//

def TLE_SignalOp : TLE_Op<"signal", [AttrSizedOperandSegments]> {
  let summary = "Add to a signal word of a peer, as a release";
  let description = [{
    Every rank of the communicator `comm` owns `nSignals` 64-bit signal
    words (a runtime configuration, 64 by default). `tle.signal` adds to
    word `sig` of rank `peer` (this rank included):

    - `inc`: adds 1;
    - `add`: adds `value` (an `i64`, read as unsigned).

    A signal is a release: what the group wrote before it is visible to a
    thread of `peer` whose `tle.signal_wait` (acquire) observed the new
    value. `group` says who executes the call together: `thread`, `warp` or
    `block` (the default): the group synchronizes, one of its threads
    signals, the group synchronizes again. `peer` and `sig` are runtime
    `i32` values; a peer outside the communicator or an index at or beyond
    its signal count is reported by the runtime before any word is touched.
    Words only grow, except by `tle.reset_signal`.

    `team` says how `peer` is numbered: `intra` (the default, elided when
    printing) a rank of this node, `inter` a node (the rank of the same
    local rank there), `world` a world rank. Each rank has one set of
    words whatever the team; the team chooses the peer and so the
    transport. `context` selects FlagCX's network context (its words; 0
    when absent), as on every signal op.

    Verifier rules:
    - `inc` takes no value and `add` needs one;
    - a constant `peer` or `sig` must be non-negative;
    - a constant `value` must be non-negative: a signal only adds, and a
      negative `i64` would wrap the word backwards;
    - a constant `context` must be non-negative;
    - a constant null `comm` is rejected.

    Example:

    ```mlir
    tle.signal inc %comm, %peer, %sig : !llvm.ptr
    tle.signal add %comm, %peer, %sig, %n group warp : i64
    tle.signal inc %comm, %node, %sig team inter : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_SignalKind:$kind,
    TLE_HandleType:$comm,
    I32:$peer,
    I32:$sig,
    Optional<I64>:$value,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_Team, "::mlir::tle::Team::intra">:$team
  );

  let assemblyFormat = [{
    $kind $comm `,` $peer `,` $sig (`,` $value^)? (`team` $team^)?
    (`context` $contextId^)? (`group` $group^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_SignalWaitOp : TLE_Op<"signal_wait"> {
  let summary = "Wait until this rank's signal word reaches a value";
  let description = [{
    Waits until this rank's signal word `sig` of the communicator `comm` is
    at least `least` (both read as unsigned 64-bit values), with the acquire
    half of `order` (`relaxed`, `acquire`, the default, `acq_rel` or
    `seq_cst`; `seq_cst` also orders the wait in the single total order).
    An acquire wait that observed a signal makes everything the signalling
    group wrote before it visible to the whole waiting group. `group`:
    `thread`, `warp` or `block` (the default): the group synchronizes, one
    of its threads polls, the group synchronizes again. The wait has the
    barrier's deadline: a word that never reaches `least` fails the launch
    with a report naming the word, the value seen and the value wanted.

    Verifier rules: `order release` is rejected (a wait only observes; the
    release half would silently be dropped); a constant `sig` or `context`
    must be non-negative; a constant null `comm` is rejected. `context` is
    that of `tle.signal`.

    Example:

    ```mlir
    tle.signal_wait %comm, %sig, %least : !llvm.ptr
    tle.signal_wait %comm, %sig, %least group thread order relaxed : i64
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$sig,
    I64:$least,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acquire">:$order
  );

  let assemblyFormat = [{
    $comm `,` $sig `,` $least (`context` $contextId^)? (`group` $group^)?
    (`order` $order^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ReadSignalOp : TLE_Op<"read_signal"> {
  let summary = "This rank's signal word, read by the calling thread";
  let description = [{
    Returns this rank's signal word `sig` of the communicator `comm`, loaded
    by the calling thread alone with the acquire half of `order` (`acquire`
    by default). Peers change the word at any time, so two reads are never
    merged. On the CPU emulator a read yields, so a kernel may poll a word
    in a loop of its own.

    Verifier rules: `order release` is rejected (a read only observes); a
    constant `sig` must be non-negative; a constant null `comm` is rejected.

    Example:

    ```mlir
    %v = tle.read_signal %comm, %sig : !llvm.ptr
    %w = tle.read_signal %comm, %sig order relaxed : i64
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$sig,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acquire">:$order
  );
  let results = (outs I64:$result);

  let assemblyFormat = [{
    $comm `,` $sig (`context` $contextId^)? (`order` $order^)? attr-dict
    `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ResetSignalOp : TLE_Op<"reset_signal"> {
  let summary = "Set this rank's signal word to zero";
  let description = [{
    Stores 0 into this rank's signal word `sig` of the communicator `comm`
    (the calling thread; several threads may store it). A reset racing with
    a peer's signal to the same word can lose that signal: reset between
    phases that a barrier or another signal separates.

    Verifier rules: a constant `sig` must be non-negative; a constant null
    `comm` is rejected.

    Example:

    ```mlir
    tle.reset_signal %comm, %sig : !llvm.ptr
    ```
  }];

  let arguments = (ins TLE_HandleType:$comm, I32:$sig, Optional<I32>:$contextId);

  let assemblyFormat = [{
    $comm `,` $sig (`context` $contextId^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// One-sided data movement
//===----------------------------------------------------------------------===//

def TLE_PutOp : TLE_Op<"put",
    [AttrSizedOperandSegments, AllTypesMatch<["comm", "dst", "src"]>]> {
  let summary = "Copy bytes of this rank's buffer into a peer's, as FlagCX's put";
  let description = [{
    Copies `bytes` bytes from byte `srcOffset` of this rank's copy of the
    symmetric buffer `src` to byte `dstOffset` of rank `peer`'s copy of the
    symmetric buffer `dst`, executed by the group `group` together (every
    thread copies a part). `team` says how `peer` is numbered (`intra`, the
    default: a rank of this node; `inter`: a node; `world`: a world rank)
    and so which transport carries the data: peer pointers inside a node,
    the network between nodes.

    Two completions can be attached, in FlagCX's combinations:

    - `signal inc %sig` / `signal add %sig, %value`: after the data has
      landed, word `sig` of `peer` grows by 1 / `value`, as a release: a
      `tle.signal_wait` of `peer` that observed it sees the data;
    - `counter %ctr`: word `ctr` of this rank's counters grows by 1 when
      `src` may be reused (`tle.counter_wait` waits for it).

    A put without a signal tells the peer nothing: order it with a later
    `tle.signal` of the same team or a barrier. `order` is `relaxed` (the
    default) or `release`/`acq_rel`: what the group wrote before the put is
    visible before its data; `context` selects FlagCX's network context (0
    when absent). `group` is `thread`, `warp` or `block` (the default).
    Offsets and sizes are runtime `i64` values read as unsigned; the runtime
    reports a range past either buffer, a peer outside the team or a word
    outside its count, before any byte moves.

    Verifier rules: `inc` takes no value and `add` needs one; a constant
    offset, size, peer, signal, counter, value or context must be
    non-negative; `order acquire` and `seq_cst` are rejected (a put only
    publishes, and FlagCX's put fences for `release` and `acq_rel` alone:
    either would be weakened silently); a constant null handle is
    rejected, and so is a buffer handle that is a communicator (this op's
    own, or one another `tle` op takes as its communicator).

    Example:

    ```mlir
    tle.put %comm, %dst[%doff], %src[%soff], %bytes, %peer : !llvm.ptr
    tle.put %comm, %dst[%doff], %src[%soff], %bytes, %node team inter signal inc %sig counter %ctr group warp : i64
    tle.put %comm, %dst[%doff], %src[%soff], %bytes, %rank team world signal add %sig, %n order release context %ctx : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    TLE_HandleType:$dst,
    I64:$dstOffset,
    TLE_HandleType:$src,
    I64:$srcOffset,
    I64:$bytes,
    I32:$peer,
    Optional<I32>:$signal,
    Optional<I64>:$signalValue,
    Optional<I32>:$counter,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_Team, "::mlir::tle::Team::intra">:$team,
    OptionalAttr<TLE_SignalKind>:$signalKind,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::relaxed">:$order
  );

  let assemblyFormat = [{
    $comm `,` $dst `[` $dstOffset `]` `,` $src `[` $srcOffset `]` `,` $bytes
    `,` $peer (`team` $team^)?
    (`signal` $signalKind^ $signal (`,` $signalValue^)?)?
    (`counter` $counter^)? (`context` $contextId^)? (`group` $group^)?
    (`order` $order^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_GetOp : TLE_Op<"get", [AllTypesMatch<["comm", "src", "dst"]>]> {
  let summary = "Copy bytes of a peer's buffer into this rank's, as FlagCX's get";
  let description = [{
    The mirror image of `tle.put` (operands in FlagCX's order, the remote
    side first): copies `bytes` bytes from byte `srcOffset` of rank
    `peer`'s copy of the symmetric buffer `src` to byte `dstOffset` of this
    rank's copy of `dst`, executed by the group `group`. Between nodes the
    data is only known to have landed after `tle.flush` of the same
    context; inside a node it has landed when the call returns. `order`
    `acquire` or `acq_rel` makes what the copy read visible to the group
    afterwards; `relaxed` is the default. `team`, `context`, `group` and
    the runtime checks are those of `tle.put`.

    Verifier rules: a constant offset, size, peer or context must be
    non-negative; `order release` and `seq_cst` are rejected (a get only
    observes, and FlagCX's get fences for `acquire` and `acq_rel` alone); a
    constant null handle is rejected, and so is a buffer handle that is a
    communicator (as for `tle.put`).

    Example:

    ```mlir
    tle.get %comm, %src[%soff], %dst[%doff], %bytes, %rank team world : !llvm.ptr
    tle.flush %comm : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    TLE_HandleType:$src,
    I64:$srcOffset,
    TLE_HandleType:$dst,
    I64:$dstOffset,
    I64:$bytes,
    I32:$peer,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_Team, "::mlir::tle::Team::intra">:$team,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::relaxed">:$order
  );

  let assemblyFormat = [{
    $comm `,` $src `[` $srcOffset `]` `,` $dst `[` $dstOffset `]` `,` $bytes
    `,` $peer (`team` $team^)? (`context` $contextId^)? (`group` $group^)?
    (`order` $order^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_PutValueOp : TLE_Op<"put_value",
    [AttrSizedOperandSegments, AllTypesMatch<["comm", "dst"]>]> {
  let summary = "Store a 64-bit value into a peer's buffer, as FlagCX's put-value";
  let description = [{
    Stores the 8 bytes of `value` at byte `dstOffset` of rank `peer`'s copy
    of the symmetric buffer `dst` (one thread of the group stores; the
    group synchronizes around it), optionally followed by a signal to
    `peer` (`signal inc %sig` / `signal add %sig, %n`) released after the
    value. `team`, `context`, `group`, `order` and the runtime checks are
    those of `tle.put` (FlagCX has no counter form of put-value).

    Verifier rules: those of `tle.put`.

    Example:

    ```mlir
    tle.put_value %comm, %dst[%off], %v, %peer signal inc %sig : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    TLE_HandleType:$dst,
    I64:$dstOffset,
    I64:$value,
    I32:$peer,
    Optional<I32>:$signal,
    Optional<I64>:$signalValue,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_Team, "::mlir::tle::Team::intra">:$team,
    OptionalAttr<TLE_SignalKind>:$signalKind,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::relaxed">:$order
  );

  let assemblyFormat = [{
    $comm `,` $dst `[` $dstOffset `]` `,` $value `,` $peer (`team` $team^)?
    (`signal` $signalKind^ $signal (`,` $signalValue^)?)?
    (`context` $contextId^)? (`group` $group^)? (`order` $order^)?
    attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_FlushOp : TLE_Op<"flush"> {
  let summary = "Complete this group's puts and gets of a network context";
  let description = [{
    Returns when every `tle.put`, `tle.put_value` and `tle.get` that the
    calling group issued on network context `context` (0 when absent) has
    completed: a get's data has landed in this rank's buffer, a put's
    source may be reused. Peer-pointer transfers (inside a node) have
    completed at their return; a flush then only fences. `order` is the
    memory order of that fence (`acq_rel` by default); `group` as for
    `tle.put`.

    Verifier rules: a constant `context` must be non-negative; a constant
    null `comm` is rejected.

    Example:

    ```mlir
    tle.flush %comm : !llvm.ptr
    tle.flush %comm context %ctx group warp order acquire : i64
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acq_rel">:$order
  );

  let assemblyFormat = [{
    $comm (`context` $contextId^)? (`group` $group^)? (`order` $order^)?
    attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_CounterWaitOp : TLE_Op<"counter_wait"> {
  let summary = "Wait until this rank's counter reaches a value";
  let description = [{
    Waits until this rank's counter word `counter` (of network context
    `context`, 0 when absent) is at least `least`, both read as unsigned
    64-bit values, with the acquire half of `order` (`acquire` by
    default). A `tle.put ... counter %ctr` adds 1 to its counter when its
    source may be reused, so waiting for `n` there means the `n` first
    puts' sources may be overwritten. `group` and the deadline are those of
    `tle.signal_wait`.

    Verifier rules: `order release` is rejected; a constant `counter` or
    `context` must be non-negative; a constant null `comm` is rejected.

    Example:

    ```mlir
    tle.counter_wait %comm, %ctr, %n : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$counter,
    I64:$least,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acquire">:$order
  );

  let assemblyFormat = [{
    $comm `,` $counter `,` $least (`context` $contextId^)? (`group` $group^)?
    (`order` $order^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ReadCounterOp : TLE_Op<"read_counter"> {
  let summary = "This rank's counter word, read by the calling thread";
  let description = [{
    Returns this rank's counter word `counter` of network context
    `context` (0 when absent), loaded by the calling thread with the
    acquire half of `order` (`acquire` by default). Never merged with
    another read.

    Verifier rules: `order release` is rejected; a constant `counter` or
    `context` must be non-negative; a constant null `comm` is rejected.

    Example:

    ```mlir
    %n = tle.read_counter %comm, %ctr : !llvm.ptr
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$counter,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acquire">:$order
  );
  let results = (outs I64:$result);

  let assemblyFormat = [{
    $comm `,` $counter (`context` $contextId^)? (`order` $order^)? attr-dict
    `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ResetCounterOp : TLE_Op<"reset_counter"> {
  let summary = "Set this rank's counter word to zero";
  let description = [{
    Stores 0 into this rank's counter word `counter` of network context
    `context` (0 when absent). A reset racing with a put still in flight on
    that counter can lose its increment: reset after `tle.counter_wait`
    saw every put of the phase.

    Verifier rules: a constant `counter` or `context` must be
    non-negative; a constant null `comm` is rejected.

    Example:

    ```mlir
    tle.reset_counter %comm, %ctr : !llvm.ptr
    ```
  }];

  let arguments = (ins TLE_HandleType:$comm, I32:$counter,
                   Optional<I32>:$contextId);

  let assemblyFormat = [{
    $comm `,` $counter (`context` $contextId^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ShadowIncreaseOp : TLE_Op<"shadow_increase"> {
  let summary = "Raise the expected value of a signal word by a delta";
  let description = [{
    Every signal word of this rank has a shadow, a local 64-bit word the
    kernel keeps: the value it expects the signal word to reach.
    `tle.shadow_increase` adds `delta` to the shadow of word `sig` of
    network context `context` (0 when absent); `tle.shadow_wait` waits for
    the signal word to reach its shadow. A kernel that expects `n` more
    signals in each round adds `n` and waits, without counting rounds
    itself. The shadow is this rank's alone: no peer sees it.

    Verifier rules: a constant `sig`, `delta` or `context` must be
    non-negative; a constant null `comm` is rejected.

    Example:

    ```mlir
    tle.shadow_increase %comm, %sig, %n : !llvm.ptr
    tle.shadow_wait %comm, %sig : !llvm.ptr
    ```
  }];

  let arguments = (ins TLE_HandleType:$comm, I32:$sig, I64:$delta,
                   Optional<I32>:$contextId);

  let assemblyFormat = [{
    $comm `,` $sig `,` $delta (`context` $contextId^)? attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

def TLE_ShadowWaitOp : TLE_Op<"shadow_wait"> {
  let summary = "Wait until a signal word reaches its shadow";
  let description = [{
    Waits until this rank's signal word `sig` (of network context
    `context`, 0 when absent) is at least its shadow (`tle.shadow_increase`),
    with the acquire half of `order` (`acquire` by default). `group` and the
    deadline are those of `tle.signal_wait`.

    Verifier rules: those of `tle.signal_wait`.

    Example:

    ```mlir
    tle.shadow_wait %comm, %sig group warp : i64
    ```
  }];

  let arguments = (ins
    TLE_HandleType:$comm,
    I32:$sig,
    Optional<I32>:$contextId,
    DefaultValuedAttr<TLE_SignalGroup,
                      "::mlir::tle::SignalGroup::block">:$group,
    DefaultValuedAttr<TLE_MemoryOrder,
                      "::mlir::tle::MemoryOrder::acquire">:$order
  );

  let assemblyFormat = [{
    $comm `,` $sig (`context` $contextId^)? (`group` $group^)? (`order` $order^)?
    attr-dict `:` type($comm)
  }];

  let hasVerifier = 1;
}

#endif // TLE_DIALECT_TLE_IR_TLEOPS_TD
