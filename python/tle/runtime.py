# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ctypes binding of TLE's host C API (``runtime/include/tle/tle.h``).

A thin, torch-free layer: ``Comm`` and ``Mem`` own a ``tleComm_t`` and a
``tleMem_t``, every failing call raises ``TLEError`` carrying the result code,
``tleGetErrorString`` and ``tleGetLastErrorDetail``, and ``Comm.get_error``
reads the device error record a failed launch left (``Comm.job_error``: every
rank's, merged into one report). ``tle.torch`` builds on
it; tests use it directly with the CPU emulator backend.

The library is ``$TLE_LIB``, ``$TLE_BUILD_DIR/lib/libtle.so``, or the
checkout's ``build-gpu``/``build`` (see ``tle.host_library_path``).
"""

from __future__ import annotations

import ctypes
import enum
import operator
import os
import re
import threading
from dataclasses import dataclass
from typing import Sequence

from . import __version__
from ._paths import host_library_path


def _major_minor(version: str) -> tuple[int | None, int | None]:
    match = re.match(r"(\d+)\.(\d+)\.", version)
    return (int(match[1]), int(match[2])) if match else (None, None)


#: TLE_VERSION_MAJOR and TLE_VERSION_MINOR of tle/version.h: both are
#: project()'s version (tle.__version__), the one place it is written;
#: None when this copy of the package cannot tell it ("unknown": no
#: tle/_version.py and no source checkout), which makes a communicator's
#: config fail. tleConfig_t.version carries major * 100 + minor.
VERSION_MAJOR, VERSION_MINOR = _major_minor(__version__)
#: sizeof(tleUniqueId::internal).
UNIQUE_ID_BYTES = 128


class Result(enum.IntEnum):
    """tleResult_t."""
    SUCCESS = 0
    INVALID_ARGUMENT = 1
    SYSTEM_ERROR = 2
    CUDA_ERROR = 3
    TIMEOUT = 4
    DEADLOCK = 5
    INDEX_OUT_OF_RANGE = 6
    INVALID_COMM = 7
    PEER_FAILURE = 8
    NOT_SUPPORTED = 9
    INTERNAL_ERROR = 10
    LAUNCH_FAILURE = 11
    DATA_RACE = 12
    BARRIER_MISUSE = 13
    ABORTED = 14


class Backend(enum.IntEnum):
    """tleBackend_t."""
    EMULATOR = 0
    CUDA = 1


class Alloc(enum.IntEnum):
    """tleAllocType_t: how the CUDA backend allocates the memory peers map."""
    DEFAULT = 0
    CUDA_MALLOC = 1
    CU_MEM = 2
    AUTO = 3


class OnError(enum.IntEnum):
    """tleOnError_t: what a failed device wait does (docs/runtime.md, "Faults")."""
    DEFAULT = 0  #: $TLE_ON_ERROR, else TRAP
    TRAP = 1  #: record and end the launch
    RETURN = 2  #: record, mark the communicator failed, let the kernel run on


# The structs and enums below are tle.h's, copied by hand;
# python/tests/test_runtime_header.py parses tle.h and compiles it, and fails
# on any difference in a name, a value, a field, a type or an offset.


class _Config(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("version", ctypes.c_uint),
        ("backend", ctypes.c_int),
        ("nBarriers", ctypes.c_uint32),
        ("timeoutMs", ctypes.c_int64),
        ("bootstrapTimeoutMs", ctypes.c_int64),
        ("allocType", ctypes.c_int),
        ("nSignals", ctypes.c_uint32),
        ("onError", ctypes.c_int),
        ("ranksPerNode", ctypes.c_uint32),
        ("nContexts", ctypes.c_uint32),
    ]


#: The most network contexts a communicator has (tleConfig_t::nContexts).
MAX_CONTEXTS = 8

#: TLE_MAX_RANKS of tle.h: the largest communicator, and the size of the
#: missing-peer set in tleErrorInfo.
MAX_RANKS = 128


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]


class _ErrorInfo(ctypes.Structure):
    _fields_ = [
        ("result", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("slot", ctypes.c_uint32),
        ("epoch", ctypes.c_uint32),
        ("missingMask", ctypes.c_uint32),
        ("block", ctypes.c_int),
        ("thread", ctypes.c_int),
        ("nBarriers", ctypes.c_uint32),
        ("elapsedNs", ctypes.c_uint64),
        ("missingPeers", ctypes.c_uint64 * (MAX_RANKS // 64)),
        ("message", ctypes.c_char * 256),
    ]


@dataclass(frozen=True)
class ErrorInfo:
    """What the device library recorded when a launch failed (tleErrorInfo)."""
    result: Result
    rank: int
    slot: int
    epoch: int
    missing_peers: tuple[int, ...]
    block: int
    thread: int
    n_barriers: int
    elapsed_ns: int
    message: str


def _error_info(info: _ErrorInfo) -> ErrorInfo:
    return ErrorInfo(
        result=Result(info.result) if info.result in Result._value2member_map_ else info.result,
        rank=info.rank, slot=info.slot, epoch=info.epoch,
        missing_peers=tuple(p for p in range(MAX_RANKS) if info.missingPeers[p // 64] >> (p % 64) & 1),
        block=info.block, thread=info.thread, n_barriers=info.nBarriers, elapsed_ns=info.elapsedNs,
        message=info.message.decode(errors="replace"))


class TLEError(RuntimeError):
    """A TLE C API call failed, or a kernel recorded a device error.

    ``code`` is the ``Result``; ``detail`` is TLE's detailed message;
    ``info`` is the device error record when the error came from a kernel.
    """

    def __init__(self, code: int, what: str, detail: str = "", info: ErrorInfo | None = None):
        self.code = Result(code) if code in Result._value2member_map_ else code
        self.detail = detail
        self.info = info
        text = f"{what}: {_error_string(code)}"
        if detail:
            text += f": {detail}"
        super().__init__(text)

    @staticmethod
    def find(exc: BaseException | None) -> TLEError | None:
        """The ``TLEError`` that is ``exc`` or caused it, else None. Under
        Triton's interpreter a kernel's device error is raised at the launch,
        wrapped by Triton in an ``InterpreterError`` whose cause it is."""
        seen = set()
        while exc is not None and id(exc) not in seen:
            if isinstance(exc, TLEError):
                return exc
            seen.add(id(exc))
            exc = exc.__cause__ or exc.__context__
        return None


_lib: ctypes.CDLL | None = None
_lib_lock = threading.Lock()

_vp = ctypes.c_void_p
_PROTOTYPES: dict[str, tuple[type | None, list]] = {
    "tleGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
    "tleGetLastErrorDetail": (ctypes.c_char_p, []),
    "tleGetUniqueId": (ctypes.c_int, [ctypes.POINTER(_UniqueId)]),
    "tleCommInitRank": (ctypes.c_int, [ctypes.POINTER(_vp), ctypes.c_int, ctypes.POINTER(_UniqueId), ctypes.c_int,
                                       ctypes.c_int, ctypes.POINTER(_Config)]),
    "tleCommInitAll": (ctypes.c_int, [ctypes.POINTER(_vp), ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(_Config)]),
    # The functions argument is passed as NULL only: libtle finds the
    # process's libnccl itself.
    "tleCommInitFromNccl": (ctypes.c_int, [ctypes.POINTER(_vp), _vp, _vp, ctypes.POINTER(_Config)]),
    "tleCommDestroy": (ctypes.c_int, [_vp]),
    "tleCommRank": (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.c_int)]),
    "tleCommSize": (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.c_int)]),
    "tleCommNode": (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    "tleCommBackend": (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.c_int)]),
    "tleCommGetDevComm": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "tleMemAlloc": (ctypes.c_int, [_vp, ctypes.c_size_t, ctypes.POINTER(_vp)]),
    "tleMemAllocAll": (ctypes.c_int, [ctypes.POINTER(_vp), ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(_vp)]),
    "tleMemImport": (ctypes.c_int, [_vp, _vp, ctypes.c_size_t, ctypes.POINTER(_vp), ctypes.POINTER(_vp)]),
    "tleMemImportAll": (ctypes.c_int, [ctypes.POINTER(_vp), ctypes.c_int, ctypes.POINTER(_vp), ctypes.c_size_t,
                                       ctypes.POINTER(_vp)]),
    "tleMemRegister": (ctypes.c_int, [_vp, _vp, ctypes.c_size_t, ctypes.POINTER(_vp)]),
    "tleShareableAlloc": (_vp, [ctypes.c_size_t, ctypes.c_int, _vp]),
    "tleShareableFree": (None, [_vp, ctypes.c_size_t, ctypes.c_int, _vp]),
    "tleMemFree": (ctypes.c_int, [_vp]),
    "tleMemGetHandle": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "tleMemGetLocalPtr": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "tleCommGetError": (ctypes.c_int, [_vp, ctypes.POINTER(_ErrorInfo)]),
    "tleCommGetJobError": (ctypes.c_int, [_vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "tleCommGetSignals": (ctypes.c_int, [_vp, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64)]),
    "tleCommTraceStart": (ctypes.c_int, [_vp, ctypes.c_uint32]),
    "tleCommTraceStop": (ctypes.c_int, [_vp]),
    "tleTraceWrite": (ctypes.c_int, [ctypes.POINTER(_vp), ctypes.c_int, ctypes.c_char_p]),
    "tleSiteRegister": (ctypes.c_int, [ctypes.c_uint32, ctypes.c_char_p]),
    "tleSiteText": (ctypes.c_char_p, [ctypes.c_uint32]),
}


def library() -> ctypes.CDLL:
    """libtle.so, loaded once, with every function's prototype declared."""
    global _lib
    with _lib_lock:
        if _lib is None:
            lib = ctypes.CDLL(host_library_path())
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = lib
        return _lib


def site_id(text: str) -> int:
    """The call-site id of ``text`` ("file:line"), as ``tle::abi::siteId``
    computes it (tle/abi.h): FNV-1a of its UTF-8 bytes, bit 31 cleared,
    never 0. A failed wait's record carries it (docs/design.md, "Call
    sites")."""
    h = 2166136261
    for byte in text.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    h &= 0x7FFFFFFF
    return h or 1


_registered_sites: set[int] = set()


def register_site(text: str) -> int:
    """``text``'s id, entered in this process's table of call sites
    (``tleSiteRegister``) so that the job's report names the line. Without
    a loadable libtle (a kernel compiled where TLE's host library is not
    built) the id is only computed; a report in another process then names
    the id."""
    site = site_id(text)
    if site not in _registered_sites:
        try:
            library().tleSiteRegister(site, text.encode())
        except OSError:
            return site
        _registered_sites.add(site)
    return site


def site_text(site: int) -> str | None:
    """The text this process registered for call-site id ``site``."""
    text = library().tleSiteText(site)
    return text.decode() if text is not None else None


def _error_string(code: int) -> str:
    text = library().tleGetErrorString(code)
    return text.decode() if text else f"TLE error {code}"


def _check(code: int, what: str) -> None:
    if code != Result.SUCCESS:
        detail = library().tleGetLastErrorDetail()
        raise TLEError(code, what, detail.decode(errors="replace") if detail else "")


_C_INT = (-2**31, 2**31 - 1)
_C_INT64 = (-2**63, 2**63 - 1)
_C_UINT32 = (0, 2**32 - 1)
_C_SIZE_T = (0, 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1)


def _integer(name: str, value: object, bounds: tuple[int, int]) -> int:
    """``value`` as an int within ``bounds`` (those of the C type it is passed
    as): ctypes would silently wrap anything outside them, turning
    ``n_barriers=2**32 + 3`` into 3."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool; got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {value!r}") from None
    low, high = bounds
    if not low <= number <= high:
        raise ValueError(f"{name} must be in [{low}, {high}]; got {number}")
    return number


def _timeout(name: str, value: int | None) -> int:
    return -1 if value is None else _integer(name, value, _C_INT64)


def _config(backend: Backend, n_barriers: int, timeout_ms: int | None,
            bootstrap_timeout_ms: int | None, alloc: Alloc = Alloc.DEFAULT, n_signals: int = 64,
            on_error: OnError = OnError.DEFAULT, ranks_per_node: int = 0, n_contexts: int = 4) -> _Config:
    if VERSION_MAJOR is None:
        raise RuntimeError(f"TLE's version is {__version__!r} (no tle/_version.py and no source checkout); the "
                           f"C API needs it in tleConfig_t: reinstall the package")
    if _integer("n_barriers", n_barriers, _C_UINT32) <= 0:
        raise ValueError(f"n_barriers must be positive; got {n_barriers}")
    if _integer("n_signals", n_signals, _C_UINT32) <= 0:
        raise ValueError(f"n_signals must be positive; got {n_signals}")
    if not 1 <= _integer("n_contexts", n_contexts, _C_UINT32) <= MAX_CONTEXTS:
        raise ValueError(f"n_contexts must be in 1..{MAX_CONTEXTS} (FlagCX's network contexts); got {n_contexts}")
    return _Config(ctypes.sizeof(_Config), VERSION_MAJOR * 100 + VERSION_MINOR, _integer("backend", backend, _C_INT),
                   operator.index(n_barriers), _timeout("timeout_ms", timeout_ms),
                   _timeout("bootstrap_timeout_ms", bootstrap_timeout_ms), _integer("alloc", alloc, _C_INT),
                   operator.index(n_signals), _integer("on_error", on_error, _C_INT),
                   _integer("ranks_per_node", ranks_per_node, _C_UINT32), operator.index(n_contexts))


def _ranks_per_node(ranks_per_node: int | None, n_ranks: int) -> int:
    """tleConfig_t::ranksPerNode for ``ranks_per_node`` (None: one node)."""
    if ranks_per_node is None:
        return 0
    per_node = _integer("ranks_per_node", ranks_per_node, _C_UINT32)
    if not 1 <= per_node <= max(n_ranks, 1) or n_ranks % per_node:
        raise ValueError(f"ranks_per_node must divide the {n_ranks} ranks into equal nodes; got {ranks_per_node}")
    return per_node


def _addresses(name: str, values: Sequence[int], count: int):
    """``values`` as a C array of ``count`` pointers (checked: ctypes would
    silently truncate a too-large int, and the C API reads ``count``)."""
    values = list(values)
    if len(values) != count:
        raise ValueError(f"{name} must name one address per rank: {count} ranks, {len(values)} addresses")
    return (_vp * count)(*(_integer(f"{name}[{i}]", v, _C_SIZE_T) for i, v in enumerate(values)))


def get_unique_id() -> bytes:
    """A fresh bootstrap id for ``Comm.init_rank`` (128 opaque bytes)."""
    uid = _UniqueId()
    _check(library().tleGetUniqueId(ctypes.byref(uid)), "tleGetUniqueId")
    return ctypes.string_at(ctypes.addressof(uid), UNIQUE_ID_BYTES)


class Comm:
    """A host communicator (``tleComm_t``) of one rank."""

    def __init__(self, handle: int, n_barriers: int | None = None):
        self._handle: int | None = handle
        #: Barrier slots per rank (the ``n_barriers`` it was made with; None
        #: for a handle wrapped without it). tle.ops sizes its launches by it.
        self.n_barriers = n_barriers

    @classmethod
    def init_rank(cls, n_ranks: int, unique_id: bytes, rank: int, device: int, *, backend: Backend = Backend.CUDA,
                  n_barriers: int = 64, timeout_ms: int | None = None,
                  bootstrap_timeout_ms: int | None = None, alloc: Alloc = Alloc.DEFAULT,
                  n_signals: int = 64, on_error: OnError = OnError.DEFAULT,
                  ranks_per_node: int | None = None, n_contexts: int = 4) -> Comm:
        """One rank of a communicator of ``n_ranks`` processes
        (``tleCommInitRank``; collective). ``timeout_ms`` is the device wait
        deadline: None for ``$TLE_BARRIER_TIMEOUT_MS`` or its default, 0 to
        wait forever. ``alloc`` chooses the CUDA backend's memory
        (``Alloc.DEFAULT``: ``$TLE_CUDA_ALLOC`` or TLE's default).
        ``n_signals``: signal words per rank and network context;
        ``n_contexts``: network contexts (FlagCX's ``contextId``, 1 to
        ``MAX_CONTEXTS``), each with its own signal words and counters.
        ``on_error``: what a failed device wait does (``OnError``).
        ``ranks_per_node``: simulated nodes of that many ranks (emulator;
        ``rank`` and ``n_ranks`` are the world's, and every later
        collective is the whole world's)."""
        if len(unique_id) != UNIQUE_ID_BYTES:
            raise ValueError(f"unique_id must be {UNIQUE_ID_BYTES} bytes; got {len(unique_id)}")
        uid = _UniqueId.from_buffer_copy(unique_id)
        n_ranks = _integer("n_ranks", n_ranks, _C_INT)
        per_node = _ranks_per_node(ranks_per_node, n_ranks)
        config = _config(backend, n_barriers, timeout_ms, bootstrap_timeout_ms, alloc, n_signals, on_error,
                         ranks_per_node=per_node, n_contexts=n_contexts)
        rank = _integer("rank", rank, _C_INT)
        device = _integer("device", device, _C_INT)
        out = _vp()
        _check(library().tleCommInitRank(ctypes.byref(out), n_ranks, ctypes.byref(uid), rank, device,
                                         ctypes.byref(config)), f"tleCommInitRank(rank {rank} of {n_ranks})")
        return cls(out.value, config.nBarriers)

    @classmethod
    def init_all(cls, n_ranks: int, *, devices: Sequence[int] | None = None, backend: Backend = Backend.EMULATOR,
                 n_barriers: int = 64, timeout_ms: int | None = None, n_signals: int = 64,
                 ranks_per_node: int | None = None, n_contexts: int = 4) -> list[Comm]:
        """All ``n_ranks`` ranks in this process (``tleCommInitAll``);
        ``devices``, when given, names one device per rank.
        ``ranks_per_node`` splits them into simulated nodes of that many
        ranks (the emulator; docs/emulator.md, "Nodes"): ``rank`` and
        ``size`` are then the world's, ``node`` the node's; None: one node."""
        n_ranks = _integer("n_ranks", n_ranks, _C_INT)
        per_node = _ranks_per_node(ranks_per_node, n_ranks)
        config = _config(backend, n_barriers, timeout_ms, None, n_signals=n_signals, ranks_per_node=per_node,
                         n_contexts=n_contexts)
        devs = None
        if devices is not None:
            devices = list(devices)
            # The C API reads n_ranks entries: a shorter list would be read past its end.
            if len(devices) != n_ranks:
                raise ValueError(f"devices must name one device per rank: {n_ranks} ranks, {len(devices)} devices")
            devs = (ctypes.c_int * n_ranks)(*(_integer(f"devices[{i}]", d, _C_INT) for i, d in enumerate(devices)))
        outs = (_vp * max(n_ranks, 1))()
        _check(library().tleCommInitAll(outs, n_ranks, devs, ctypes.byref(config)), f"tleCommInitAll({n_ranks})")
        return [cls(outs[i], config.nBarriers) for i in range(n_ranks)]

    @classmethod
    def init_from_nccl(cls, nccl_comm: int, *, backend: Backend = Backend.CUDA, n_barriers: int = 64,
                       timeout_ms: int | None = None, bootstrap_timeout_ms: int | None = None,
                       alloc: Alloc = Alloc.DEFAULT, n_signals: int = 64, n_contexts: int = 4) -> Comm:
        """This rank's communicator over the ranks of the NCCL communicator
        at address ``nccl_comm`` (an ``ncclComm_t``), exchanging through
        NCCL's all-gather (``tleCommInitFromNccl``; collective). The
        process must already have the libnccl that made it loaded (as
        PyTorch does)."""
        comm_ptr = _integer("nccl_comm", nccl_comm, _C_SIZE_T)
        config = _config(backend, n_barriers, timeout_ms, bootstrap_timeout_ms, alloc, n_signals,
                         n_contexts=n_contexts)
        out = _vp()
        _check(library().tleCommInitFromNccl(ctypes.byref(out), comm_ptr, None, ctypes.byref(config)),
               "tleCommInitFromNccl")
        return cls(out.value, config.nBarriers)

    @property
    def handle(self) -> int:
        """The ``tleComm_t``; raises once destroyed."""
        if self._handle is None:
            raise ValueError("the communicator was destroyed")
        return self._handle

    def _query(self, name: str) -> int:
        out = ctypes.c_int()
        _check(getattr(library(), name)(self.handle, ctypes.byref(out)), name)
        return out.value

    @property
    def rank(self) -> int:
        return self._query("tleCommRank")

    @property
    def size(self) -> int:
        return self._query("tleCommSize")

    def _node(self) -> tuple[int, int]:
        node, per_node = ctypes.c_int(), ctypes.c_int()
        _check(library().tleCommNode(self.handle, ctypes.byref(node), ctypes.byref(per_node)), "tleCommNode")
        return node.value, per_node.value

    @property
    def node(self) -> int:
        """This rank's (simulated) node; 0 on a communicator of one node."""
        return self._node()[0]

    @property
    def ranks_per_node(self) -> int:
        """Ranks per node (``size`` on a communicator of one node)."""
        return self._node()[1]

    @property
    def backend(self) -> Backend:
        return Backend(self._query("tleCommBackend"))

    @property
    def dev_comm(self) -> int:
        """Address of the device communicator: a kernel's ``comm`` argument."""
        out = _vp()
        _check(library().tleCommGetDevComm(self.handle, ctypes.byref(out)), "tleCommGetDevComm")
        return out.value or 0

    def alloc(self, nbytes: int) -> Mem:
        """A symmetric buffer of ``nbytes`` (collective, zero-filled)."""
        nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
        out = _vp()
        _check(library().tleMemAlloc(self.handle, nbytes, ctypes.byref(out)), f"tleMemAlloc({nbytes})")
        return Mem(out.value, nbytes)

    def register(self, address: int, nbytes: int) -> Mem:
        """``nbytes`` of memory this rank already allocated at ``address``,
        registered as a symmetric buffer (``tleMemRegister``; collective,
        every rank with the same ``nbytes``). Freeing the ``Mem`` unmaps the
        peers' copies; the memory stays the caller's, who keeps it alive
        until every rank has freed its registration."""
        address = _integer("address", address, _C_SIZE_T)
        nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
        out = _vp()
        _check(library().tleMemRegister(self.handle, address, nbytes, ctypes.byref(out)),
               f"tleMemRegister(0x{address:x}, {nbytes})")
        return Mem(out.value, nbytes)

    @staticmethod
    def alloc_all(comms: Sequence[Comm], nbytes: int) -> list[Mem]:
        """One symmetric buffer per rank of an ``init_all`` set. A buffer
        spans one node's ranks: for every rank of a set of nodes, one
        allocation per node."""
        nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
        comms = list(comms)
        per_node = comms[0].ranks_per_node if comms else 0
        if 0 < per_node < len(comms) and len(comms) % per_node == 0:
            return [m for first in range(0, len(comms), per_node)
                    for m in Comm.alloc_all(comms[first:first + per_node], nbytes)]
        handles = (_vp * len(comms))(*(c.handle for c in comms))
        outs = (_vp * len(comms))()
        _check(library().tleMemAllocAll(handles, len(comms), nbytes, outs), f"tleMemAllocAll({nbytes})")
        return [Mem(outs[i], nbytes) for i in range(len(comms))]

    def import_mem(self, local_ptr: int, nbytes: int, peer_ptrs: Sequence[int] | None = None) -> Mem:
        """Make ``nbytes`` at ``local_ptr``, this rank's copy of a buffer
        already mapped into every rank, a TLE buffer (``tleMemImport``;
        collective). ``peer_ptrs[p]`` is rank p's copy as this process
        addresses it; None takes every rank's ``local_ptr`` as valid for all
        (ranks of one process). Freeing the result leaves the memory alone."""
        nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
        local = _integer("local_ptr", local_ptr, _C_SIZE_T)
        peers = None if peer_ptrs is None else _addresses("peer_ptrs", peer_ptrs, self.size)
        out = _vp()
        _check(library().tleMemImport(self.handle, local, nbytes, peers, ctypes.byref(out)),
               f"tleMemImport({nbytes})")
        return Mem(out.value, nbytes)

    @staticmethod
    def import_all(comms: Sequence[Comm], local_ptrs: Sequence[int], nbytes: int) -> list[Mem]:
        """``import_mem`` for every rank of an ``init_all`` set from one
        thread (``tleMemImportAll``): ``local_ptrs[r]`` is rank r's copy."""
        nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
        handles = (_vp * len(comms))(*(c.handle for c in comms))
        ptrs = _addresses("local_ptrs", local_ptrs, len(comms))
        outs = (_vp * len(comms))()
        _check(library().tleMemImportAll(handles, len(comms), ptrs, nbytes, outs), f"tleMemImportAll({nbytes})")
        return [Mem(outs[i], nbytes) for i in range(len(comms))]

    def signals(self, first: int, count: int) -> list[int]:
        """This rank's signal words ``first .. first + count - 1``
        (``tleCommGetSignals``; between launches)."""
        first = _integer("first", first, _C_UINT32)
        count = _integer("count", count, _C_UINT32)
        out = (ctypes.c_uint64 * max(count, 1))()
        _check(library().tleCommGetSignals(self.handle, first, count, out), "tleCommGetSignals")
        return list(out[:count])

    def get_error(self) -> ErrorInfo | None:
        """Read and clear the device error record: None when nothing was
        recorded."""
        info = _ErrorInfo()
        code = library().tleCommGetError(self.handle, ctypes.byref(info))
        if info.result == Result.SUCCESS:
            _check(code, "tleCommGetError")
            return None
        return _error_info(info)

    def job_error(self) -> dict:
        """The job's report of a failed wait (``tleCommGetJobError``;
        docs/runtime.md, "The job's report") as a dict: ``failed``,
        ``culprit`` (a rank or None), ``why``, ``report`` (the text) and
        ``ranks`` (each rank's fate and record). The records are read, not
        cleared. With one process per rank it is collective: every rank
        calls it (on its failure path); a rank that does not within the
        bootstrap deadline is reported as silent. Never raises for the
        failure it reports."""
        import json
        needed = ctypes.c_size_t(0)
        code = library().tleCommGetJobError(self.handle, None, 0, ctypes.byref(needed))
        if needed.value == 0:
            _check(code, "tleCommGetJobError")
        buf = ctypes.create_string_buffer(needed.value)
        _check(library().tleCommGetJobError(None, buf, needed.value, None), "tleCommGetJobError")
        return json.loads(buf.value.decode())

    def check_error(self) -> None:
        """Raise ``TLEError`` with the device error record, if there is one."""
        info = self.get_error()
        if info is not None:
            raise TLEError(info.result, "device error", info.message, info)

    def trace_start(self, capacity: int = 0) -> None:
        """Record the barrier's events of this communicator (every group's
        arrive and the begin and end of its waits) into a ring of the latest
        ``capacity`` events (a power of two; 0: 65536), between launches;
        ``write_trace`` writes them. Costs nothing while off."""
        capacity = _integer("capacity", capacity, _C_UINT32)
        _check(library().tleCommTraceStart(self.handle, capacity), "tleCommTraceStart")

    def trace_stop(self) -> None:
        """Stop recording and drop the ring, with the events not yet
        written: ``write_trace`` comes first."""
        _check(library().tleCommTraceStop(self.handle), "tleCommTraceStop")

    @staticmethod
    def write_trace(comms: Sequence[Comm], path: str | os.PathLike) -> None:
        """Write what the rings of ``comms`` recorded since the last write to
        ``path`` as one Chrome/Perfetto JSON trace (a process per rank; open
        it in ui.perfetto.dev), and empty the rings. ``TLEError`` when one
        of them records nothing (no ``trace_start``, or after
        ``trace_stop``)."""
        handles = (_vp * len(comms))(*(c.handle for c in comms))
        _check(library().tleTraceWrite(handles, len(comms), os.fsencode(path)), "tleTraceWrite")

    def abort(self) -> None:
        """Make every device wait on this communicator give up
        (``tleCommAbort``: thread-safe, also while a kernel runs);
        afterwards it can only be destroyed."""
        _check(library().tleCommAbort(self.handle), "tleCommAbort")

    def destroy(self) -> None:
        """Release the communicator (not collective); idempotent."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _check(library().tleCommDestroy(handle), "tleCommDestroy")


def shareable_alloc(nbytes: int, device: int) -> int:
    """``tleShareableAlloc``: memory that ``Comm.register`` can share with
    other processes (``device`` >= 0: cudaMalloc on that GPU; -1: host memory
    in a memory file, for the emulator backend). Returns its address; free it
    with ``shareable_free``."""
    nbytes = _integer("nbytes", nbytes, _C_SIZE_T)
    device = _integer("device", device, _C_INT)
    address = library().tleShareableAlloc(nbytes, device, None)
    if not address:
        # The allocator interface (PyTorch's) returns no status: the reason
        # is the last error detail only.
        detail = library().tleGetLastErrorDetail()
        raise RuntimeError(detail.decode(errors="replace") if detail else
                           f"tleShareableAlloc({nbytes}, device {device}) failed")
    return address


def shareable_free(address: int, device: int) -> None:
    """``tleShareableFree`` of what ``shareable_alloc`` returned."""
    library().tleShareableFree(_integer("address", address, _C_SIZE_T), 0, _integer("device", device, _C_INT), None)


class Mem:
    """A symmetric buffer (``tleMem_t``) of one rank."""

    def __init__(self, handle: int, nbytes: int):
        self._handle: int | None = handle
        self.nbytes = nbytes

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise ValueError("the symmetric buffer was freed")
        return self._handle

    @property
    def dev_handle(self) -> int:
        """Address of the buffer's device handle: a kernel's ``mem`` argument."""
        out = _vp()
        _check(library().tleMemGetHandle(self.handle, ctypes.byref(out)), "tleMemGetHandle")
        return out.value or 0

    @property
    def local_ptr(self) -> int:
        """Address of this rank's copy (device memory on GPUs)."""
        out = _vp()
        _check(library().tleMemGetLocalPtr(self.handle, ctypes.byref(out)), "tleMemGetLocalPtr")
        return out.value or 0

    @property
    def freed(self) -> bool:
        return self._handle is None

    def free(self) -> None:
        """Release this rank's handle (not collective); idempotent."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _check(library().tleMemFree(handle), "tleMemFree")
