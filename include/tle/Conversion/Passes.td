//===- Passes.td - TLE conversion passes -------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Declares every pass of TLE: the formation of barrier sessions in loops,
// the lowering of the tle dialect to the device ABI, and the passes that
// lower a kernel module for the CPU emulator. One file for all of them, as
// in MLIR and CIRCT, so that a reader finds the whole lowering story here.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_CONVERSION_PASSES_TD
#define TLE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormBarrierSessions : Pass<"tle-form-barrier-sessions"> {
  let summary = "Carry a loop's barrier epoch in SSA values (barrier sessions)";
  let description = [{
    A stateless `tle.device_intra_barrier` reads its slot's epoch from
    memory and writes it back on every call. In a loop, this pass replaces
    the barriers on one slot by a session: `tle.session_open` in front of
    the loop (the checks and the epoch, read once), `tle.session_barrier`
    in place of each barrier, taking the epoch and returning the next one,
    carried through `scf.for` and `scf.while` as one more iter_arg and out
    of `scf.if` as one more result, and `tle.session_close` behind the loop,
    which writes the epoch back. Stateless calls after the loop, later
    sessions and later launches (graph replays included) continue from it.
    An `scf.while` that exits at its condition leaves with the epoch its
    before region reached; a loop that runs no iteration closes with the
    epoch it opened with.

    A loop takes a session when every `tle.device_intra_barrier` inside it,
    at any depth, names the same `comm` and `index` values (defined outside
    the loop) and group (thread, warp or block; no grid, no multimem), sits
    under `scf.for`, `scf.while` and `scf.if` only, and the loop holds no
    call and no `tle.device_barrier` of team intra (a callee or those could
    use the slot without the session). The outermost loop that qualifies
    takes the session; in one that does not (two slots, a call), its inner
    loops are tried. Everything else is left as it is.

    Before:

    ```mlir
    scf.for %i = %c0 to %n step %c1 {
      tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    }
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    ```

    After:

    ```mlir
    %e0 = tle.session_open %comm, %slot : !llvm.ptr
    %e = scf.for %i = %c0 to %n step %c1 iter_args(%e1 = %e0) -> (i32) {
      %e2 = tle.session_barrier sync %comm, %slot, %e1 : !llvm.ptr
      scf.yield %e2 : i32
    }
    tle.session_close %comm, %slot, %e : !llvm.ptr
    tle.device_intra_barrier sync %comm, %slot : !llvm.ptr
    ```
  }];
}

def ConvertTLEToLLVM : Pass<"convert-tle-to-llvm"> {
  let summary = "Lower the tle dialect to calls of the TLE/FlagCX device ABI";
  let description = [{
    Replaces every `tle` op by one `llvm.call` of an `extern "C"` device
    function, declaring the callee as an `llvm.func` in the nearest symbol
    table (`builtin.module` or `gpu.module`) when it is not declared yet.
    All other ops are left alone (partial conversion), so the pass can run
    before `gpu-lower-to-nvvm-pipeline` or any other LLVM lowering; the same
    patterns are available to a larger lowering through
    `populateTLEToLLVMConversionPatterns`.

    `i64` communicators and buffer handles become pointers by `llvm.inttoptr`;
    pointers in a non-zero address space are cast to the generic address
    space with `llvm.addrspacecast`. Function names, signatures and the
    encodings of group, order, team and scope are listed in docs/abi.md.

    The option `abi` chooses the barrier entry points:
    - `scalar` (default): `flagcxIntraBarrier{Arrive,Wait,Sync}S(ptr comm,
      i32 coopKind, i32 index, i1 multimem, i32 order)`;
    - `unified`: `flagcxDevBarrier{Arrive,Wait,Sync}(ptr comm, i32 teamKind,
      i32 index, i32 contextId, i32 coopKind, i32 order, i32 scope)` with
      team INTRA, context 0 and scope SYSTEM. This form has no multimem
      parameter, so a `multimem` barrier is an error under it rather than
      being silently demoted.

    With either ABI, `group grid` calls TLE's own
    `tleIntraGridBarrier{Arrive,Wait,Sync}S(ptr comm, i32 index,
    i1 multimem, i32 order)`: FlagCX has no grid encoding, and its coopKind 3
    means TILE_SPAN.

    `tle.device_barrier` (a barrier of any team) calls the unified form with
    its team's encoding under either option, except that team intra with
    `group grid` calls `tleIntraGridBarrier*S` and with `multimem` calls
    `flagcxIntraBarrier*S` (the only form with a multimem parameter).
    `tle.signal` passes its team; `tle.team_rank` / `tle.team_size` call
    `flagcxDevCommGetIntraRank/Size` (intra), `flagcxDevCommGetRank/Size`
    (world) or `tleDevCommGetTeamRank/Size(comm, 1)` (inter).

    With `sites=true` (what tlec runs), every barrier, session barrier,
    signal and signal wait calls the `...At` twin of its entry point
    (`tleIntraBarrierSyncAt`, `tleDevBarrierSyncAt`,
    `tleIntraGridBarrierSyncAt`, `tleIntraBarrierSessionSyncAt`,
    `tleDevSignalIncAt`, `tleDevSignalAddAt`, `tleDevWaitSignalAt`, and the
    counter and shadow waits' `tleDevWaitCounterAt`,
    `tleDevWaitSignalMeetShadowAt`) with one
    more, trailing `i32` immediate: the call-site id of the op's location
    (`tle::abi::siteId` of "file:line:col", the first FileLineColLoc in
    it; 0 when it has none). The device library reads it only when the
    call fails, and tlec writes the table of ids into the bundle.

    The pass must run on an op with a symbol table (usually the top-level
    module), because it adds declarations to nested symbol tables.

    Before:

    ```mlir
    gpu.func @kernel(%comm: !llvm.ptr, %index: i32) kernel {
      tle.device_intra_barrier sync %comm, %index group block order release : !llvm.ptr
      gpu.return
    }
    ```

    After (`abi=scalar`):

    ```mlir
    llvm.func @flagcxIntraBarrierSyncS(!llvm.ptr, i32, i32, i1, i32)
    gpu.func @kernel(%comm: !llvm.ptr, %index: i32) kernel {
      %coop = llvm.mlir.constant(2 : i32) : i32
      %multimem = llvm.mlir.constant(false) : i1
      %order = llvm.mlir.constant(2 : i32) : i32
      llvm.call @flagcxIntraBarrierSyncS(%comm, %coop, %index, %multimem, %order)
          : (!llvm.ptr, i32, i32, i1, i32) -> ()
      gpu.return
    }
    ```
  }];
  let options = [
    Option<"abi", "abi", "::mlir::tle::BarrierABI",
           /*default=*/"::mlir::tle::BarrierABI::Scalar",
           "Barrier entry points to call",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tle::BarrierABI::Scalar, "scalar",
                        "flagcxIntraBarrier*S (FlagCX scalar form)"),
             clEnumValN(::mlir::tle::BarrierABI::Unified, "unified",
                        "flagcxDevBarrier* (FlagCX unified form)"))}]>,
    Option<"sites", "sites", "bool", /*default=*/"false",
           "Call the barrier and signal functions' ...At twins with each "
           "op's call-site id (the id of its FileLineColLoc)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// The host lowering: kernel modules for the CPU emulator (tlec --target=host).
// The emulator runs every GPU thread as a fiber that calls the kernel as a
// plain C function; ids and block barriers are emulator hooks (tle/abi.def,
// TLE_EMU_HOOK), the tle ops call the host build of the device library.
// `tle-host-pipeline` (lib/Compiler) chains these passes.
//===----------------------------------------------------------------------===//

def VerifyHostKernels : Pass<"tle-verify-host-kernels", "::mlir::ModuleOp"> {
  let summary = "Reject what the CPU emulator cannot run, and reserved names";
  let description = [{
    Reports, each at its location, every op that has no meaning on the host
    (NVVM/ROCDL/NVGPU/AMDGPU ops, inline assembly, NVVM/AMDGCN intrinsics,
    workgroup or private memory attributions, gpu ops other than ids, dims,
    `gpu.barrier` and `gpu.return`), and every symbol the host lowering
    reserves: names starting with `__tle_`, and the names of the device
    ABI's entry points and emulator hooks, which a kernel module must not
    define. Kernel names must be C identifiers. The pass changes nothing; it
    fails if it reported anything, so one run shows the whole list.

    Example (rejected):

    ```mlir
    gpu.func @tleEmuSyncBlock(%comm: !llvm.ptr) kernel { gpu.return }
    // error: symbol 'tleEmuSyncBlock' is reserved (an emulator hook)
    ```
  }];
}

def FlattenGpuModules : Pass<"tle-flatten-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move gpu.module contents into the host module";
  let description = [{
    Moves every op of every `gpu.module` into the enclosing module and erases
    the gpu.modules. `gpu.func`s become `func.func`s; a kernel `NAME` becomes
    `__tle_kernel.NAME` with the attribute `tle.emu_kernel = "NAME"`, which
    `tle-emu-entry-points` later gives a packed entry. Declarations that
    several gpu.modules share (the ABI's) are kept once; two definitions of
    one symbol are an error.

    Before:

    ```mlir
    module attributes {gpu.container_module} {
      gpu.module @m {
        gpu.func @k(%comm: !llvm.ptr) kernel { gpu.return }
      }
    }
    ```

    After:

    ```mlir
    module {
      func.func @__tle_kernel.k(%comm: !llvm.ptr) attributes {tle.emu_kernel = "k"} {
        return
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ConvertGpuToEmuHooks : Pass<"convert-gpu-to-tle-emu", "::mlir::ModuleOp"> {
  let summary = "Lower gpu ids, dims and gpu.barrier to emulator hooks";
  let description = [{
    Replaces `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim`,
    `gpu.grid_dim` by calls of `tleEmuThreadId` / `BlockId` / `BlockDim` /
    `GridDim` (dimension x, y, z as 0, 1, 2) and `gpu.barrier` by
    `tleEmuSyncBlock`, declaring the hooks from tle/abi.def.

    Before:

    ```mlir
    %t = gpu.thread_id x
    gpu.barrier
    ```

    After:

    ```mlir
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %0 = llvm.call @tleEmuThreadId(%c0) : (i32) -> i32
    %t = arith.index_castui %0 : i32 to index
    llvm.call @tleEmuSyncBlock() : () -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def InstrumentEmuAccesses : Pass<"tle-emu-instrument", "::mlir::ModuleOp"> {
  let summary = "Report memory accesses and source lines to the emulator";
  let description = [{
    Runs on the LLVM dialect, before `tle-emu-entry-points`. Gives the CPU
    emulator what it cannot see in compiled code:

    - after every `llvm.load` and `llvm.store` (except of an `llvm.alloca`,
      which no other thread can reach), `llvm.atomicrmw`, `llvm.cmpxchg`,
      `llvm.fence` and memory intrinsic, a call of
      `tleEmuAccess(addr, bytes, kind, order, where)`: the race checker
      orders atomics and fences by their memory order and checks every
      access to a symmetric buffer (kinds and orders from tle/abi.def; a
      `cmpxchg` that failed is an atomic load, with its failure order);
    - after every atomic or volatile load, `atomicrmw` and `cmpxchg`, a call
      of `tleEmuSpinHint(addr, value)` (the value read, as an `i64`), so that
      a kernel spinning on a flag by hand yields to the thread that sets it;
    - around every call of a device ABI function and of `tleEmuSyncBlock` /
      `tleEmuSyncWarp`, `tleEmuSite(where)` before and `tleEmuSite(null)`
      after, so that deadlock, timeout and misuse reports and the trace
      name the op's line.

    `where` is the op's location as `file:line:col` (the first file
    location inside it), a private constant `__tle_site.N` shared by every
    op of that location, or null when the op has none.

    Before:

    ```mlir
    llvm.call @flagcxIntraBarrierSyncS(%comm, %c2, %slot, %false, %c3) : ... loc("k.mlir":9:7)
    %v = llvm.load %p : !llvm.ptr -> i32 loc("k.mlir":10:12)
    ```

    After:

    ```mlir
    llvm.mlir.global private constant @__tle_site.0("k.mlir:9:7\00")
    llvm.mlir.global private constant @__tle_site.1("k.mlir:10:12\00")
    %s0 = llvm.mlir.addressof @__tle_site.0 : !llvm.ptr
    llvm.call @tleEmuSite(%s0) : (!llvm.ptr) -> ()
    llvm.call @flagcxIntraBarrierSyncS(%comm, %c2, %slot, %false, %c3) : ...
    %null = llvm.mlir.zero : !llvm.ptr
    llvm.call @tleEmuSite(%null) : (!llvm.ptr) -> ()
    %v = llvm.load %p : !llvm.ptr -> i32
    %s1 = llvm.mlir.addressof @__tle_site.1 : !llvm.ptr
    llvm.call @tleEmuAccess(%p, %c4_i64, %c0, %c0, %s1)
        : (!llvm.ptr, i64, i32, i32, !llvm.ptr) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def EmuEntryPoints : Pass<"tle-emu-entry-points", "::mlir::ModuleOp"> {
  let summary = "Give each emulator kernel the packed entry tleEmuLaunch calls";
  let description = [{
    Runs after the lowering to the LLVM dialect. For every `llvm.func`
    carrying `tle.emu_kernel = "NAME"`, adds the packed entry
    `void __tle_entry.NAME(void **args)`, which loads `*args[i]` as the i-th
    parameter and calls the kernel body (made internal), and a constant
    `__tle_params.NAME` holding the parameter types as the bundle spells them
    (`ptr,i32`), so that a loader can check a bundle's metadata against the
    code. Every generated name is in the reserved `__tle_` namespace, so a
    kernel may be called anything (`abort` included) without meeting a
    symbol of the process that loads it.

    Before:

    ```mlir
    llvm.func @__tle_kernel.k(%comm: !llvm.ptr) attributes {tle.emu_kernel = "k"}
    ```

    After:

    ```mlir
    llvm.func internal @__tle_kernel.k(%comm: !llvm.ptr)
    llvm.func @__tle_entry.k(%args: !llvm.ptr) {
      %slot = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %p = llvm.load %slot : !llvm.ptr -> !llvm.ptr
      %comm = llvm.load %p : !llvm.ptr -> !llvm.ptr
      llvm.call @__tle_kernel.k(%comm) : (!llvm.ptr) -> ()
      llvm.return
    }
    llvm.mlir.global constant @__tle_params.k("ptr\00")
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TLE_CONVERSION_PASSES_TD
