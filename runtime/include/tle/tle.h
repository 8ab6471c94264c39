/*===- tle.h - TLE host C API -------------------------------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * The host side of TLE: create a communicator over the ranks (GPUs, or
 * emulated ranks) of one node, allocate symmetric buffers mapped into every
 * peer, hand kernels the device pointers they take, and read back the
 * device-side error record after a failed launch.
 *
 * Every call returns a tleResult_t; a failing call also leaves a detailed,
 * thread-local message for tleGetLastErrorDetail(). Nothing here calls
 * exit() or lets a C++ exception escape.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TLE_TLE_H
#define TLE_TLE_H

#include <stddef.h>
#include <stdint.h>

#include "tle/detail/Export.h"
#include "tle/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  tleSuccess = 0,
  tleInvalidArgument = 1, /**< a bad parameter; nothing was changed */
  tleSystemError = 2,     /**< an OS call failed (memfd, socket, mmap) */
  tleCudaError = 3,       /**< a CUDA call failed */
  tleTimeout = 4,         /**< a device wait or a bootstrap step timed out */
  tleDeadlock = 5,        /**< the emulator found every thread blocked */
  tleIndexOutOfRange = 6, /**< a barrier slot index >= nBarriers, or a
                               signal index >= nSignals */
  tleInvalidComm = 7,     /**< a corrupt or foreign communicator */
  tlePeerFailure = 8,     /**< a peer died, refused us or never joined */
  tleNotSupported = 9,    /**< backend or feature not built in */
  tleInternalError = 10,  /**< a bug in TLE */
  tleLaunchFailure = 11,  /**< a launch failed for another reason */
  tleDataRace = 12,       /**< the emulator saw two unordered accesses */
  tleBarrierMisuse = 13,  /**< the emulator saw a barrier slot misused */
  tleAborted = 14,        /**< the communicator was aborted (tleCommAbort);
                               it can only be destroyed */
  tleNumResults
} tleResult_t;

/** Largest number of ranks a communicator may have (an NVLink domain of 72
 *  GPUs fits). */
#define TLE_MAX_RANKS 128

/** Most network contexts a communicator may have (tleConfig_t::nContexts;
 *  FlagCX's contextId, FlagTree's netidx). */
#define TLE_MAX_CONTEXTS 8

typedef enum {
  tleBackendEmulator = 0, /**< CPU emulator (the default) */
  tleBackendCuda = 1,     /**< NVIDIA GPUs with peer access / CUDA IPC */
} tleBackend_t;

/** How the CUDA backend allocates the memory peers map (barrier inboxes,
 *  symmetric buffers). The emulator ignores it. docs/runtime.md compares
 *  them. */
typedef enum {
  tleAllocDefault = 0,    /**< $TLE_CUDA_ALLOC if set, else TLE's default
                               (TLE_DEFAULT_ALLOC_NAME) */
  tleAllocCudaMalloc = 1, /**< cudaMalloc; peers map it with peer access
                               (one process) or legacy CUDA IPC */
  tleAllocCuMem = 2,      /**< cuMem (VMM); across processes its POSIX file
                               descriptor travels over the bootstrap's socket;
                               tleNotSupported where that is impossible */
  tleAllocAuto = 3,       /**< cuMem where possible, else cudaMalloc */
} tleAllocType_t;

/** The name ($TLE_CUDA_ALLOC spelling) of the type tleAllocDefault picks
 *  when the environment does not choose. */
#define TLE_DEFAULT_ALLOC_NAME "cudamalloc"

typedef struct tleComm *tleComm_t;
typedef struct tleMem *tleMem_t;

/** Opaque bootstrap id: rank 0 creates it, every rank passes the same bytes.
 *  It carries the rendezvous address and a random secret that peers must
 *  prove (never send) to join. */
typedef struct {
  char internal[128];
} tleUniqueId;

/** What a device wait does when it fails (tleConfig_t::onError). */
typedef enum {
  TLE_ON_ERROR_DEFAULT = 0, /**< $TLE_ON_ERROR if set, else trap */
  TLE_ON_ERROR_TRAP = 1,    /**< record and end the launch (trap on GPUs) */
  TLE_ON_ERROR_RETURN = 2,  /**< record, mark the communicator failed and
                                 return: the kernel runs to its end, every
                                 later wait gives up, the CUDA context stays
                                 usable (docs/runtime.md, "Faults") */
} tleOnError_t;

/** Communicator configuration. Initialise with TLE_CONFIG_INITIALIZER so
 *  that `size` and `version` let the struct grow compatibly: fields past
 *  `size` (a caller built against an older tle.h) take their defaults. */
typedef struct {
  size_t size;          /**< sizeof(tleConfig_t) */
  unsigned version;     /**< TLE_VERSION_MAJOR * 100 + TLE_VERSION_MINOR */
  tleBackend_t backend; /**< default tleBackendEmulator */
  uint32_t nBarriers;   /**< barrier slots; default 64 */
  int64_t timeoutMs;    /**< device wait deadline; -1: the environment
                             TLE_BARRIER_TIMEOUT_MS or its default;
                             0: wait forever */
  int64_t bootstrapTimeoutMs; /**< how long to wait for peers to join;
                                   -1: default (30 s) */
  tleAllocType_t allocType;   /**< CUDA backend's shared memory; default
                                   tleAllocDefault */
  uint32_t nSignals;          /**< 64-bit signal words per rank
                                   (tle.signal); default 64 */
  tleOnError_t onError;       /**< a failed device wait: trap (the default)
                                   or return */
  uint32_t ranksPerNode;      /**< tleCommInitAll: ranks per simulated node
                                   (emulator; the world's nRanks must be a
                                   multiple); 0: every rank in one node */
  uint32_t nContexts;         /**< network contexts (FlagCX's contextId,
                                   FlagTree's netidx): each has its own
                                   nSignals signal words, counters and
                                   shadows; 1..TLE_MAX_CONTEXTS, default 4 */
} tleConfig_t;

#define TLE_CONFIG_INITIALIZER                                                 \
  {                                                                            \
    sizeof(tleConfig_t), TLE_VERSION_MAJOR * 100 + TLE_VERSION_MINOR,          \
        tleBackendEmulator, 64, -1, -1, tleAllocDefault, 64,                   \
        TLE_ON_ERROR_DEFAULT, 0, 4                                             \
  }

/** What the device library recorded when a launch failed. */
typedef struct {
  tleResult_t result;   /**< tleSuccess when nothing was recorded */
  int rank;             /**< rank that detected it */
  uint32_t slot;        /**< barrier slot, or signal index (the message
                             says which, and a signal wait's values) */
  uint32_t epoch;       /**< epoch being waited for */
  uint32_t missingMask; /**< bit p set: peer p < 32 had not arrived */
  int block;            /**< linear block id */
  int thread;           /**< linear thread id in the block */
  uint32_t nBarriers;   /**< slots in the communicator */
  uint64_t elapsedNs;   /**< time waited before a timeout */
  /** Every peer that had not arrived: bit p % 64 of word p / 64, for the
   *  communicator's up to TLE_MAX_RANKS ranks. */
  uint64_t missingPeers[TLE_MAX_RANKS / 64];
  char message[256]; /**< the same, as one line of text */
} tleErrorInfo;

TLE_API const char *tleGetErrorString(tleResult_t result);
/** Detail of the last failure on this thread ("" when none). */
TLE_API const char *tleGetLastErrorDetail(void);

/** Default device-wait timeout in ms when TLE_BARRIER_TIMEOUT_MS is unset. */
#define TLE_DEFAULT_TIMEOUT_MS 10000

/** A fresh id for tleCommInitRank: a rendezvous address (an abstract Unix
 *  socket that rank 0 will listen on) and a 128-bit random secret. Any
 *  process may create it; rank 0 listens, the others connect. */
TLE_API tleResult_t tleGetUniqueId(tleUniqueId *outId);

/** One rank of a multi-process communicator (one process per rank).
 *  Collective: every rank calls it with the same id and nRanks. A peer that
 *  cannot prove the id's secret is refused; a rank that never joins or
 *  dies makes the others fail (tleTimeout / tlePeerFailure) within
 *  config->bootstrapTimeoutMs. */
TLE_API tleResult_t tleCommInitRank(tleComm_t *outComm, int nRanks,
                                    const tleUniqueId *id, int rank, int device,
                                    const tleConfig_t *config);

/** This process's rank of a `python -m tle.launch --no-python PROGRAM` run
 *  (one process per rank, a C or C++ program): tleCommInitRank with the
 *  rank, size and bootstrap id the launcher sets (TLE_LAUNCH_RANK,
 *  TLE_LAUNCH_SIZE, TLE_LAUNCH_UNIQUE_ID) and, with its --nodes,
 *  config->ranksPerNode = TLE_LAUNCH_RANKS_PER_NODE. `device` < 0: the GPU
 *  LOCAL_RANK names (0 without it; the emulator ignores it). `config` NULL:
 *  the defaults. Collective over the launch's ranks. tleInvalidArgument,
 *  saying how to start the program, when the variables are not set. */
TLE_API tleResult_t tleCommInitFromLauncher(tleComm_t *outComm, int device,
                                            const tleConfig_t *config);

/** The NCCL functions tleCommInitFromNccl calls, with NCCL's signatures
 *  (ncclResult_t and ncclDataType_t are ints, ncclComm_t and cudaStream_t
 *  pointers: cast &ncclAllGather and the others to these types). libtle
 *  does not link NCCL. */
typedef struct {
  size_t size; /**< sizeof(tleNcclFunctions_t) */
  int (*allGather)(const void *sendbuff, void *recvbuff, size_t sendcount,
                   int datatype, void *comm, void *stream);
  int (*commCount)(void *comm, int *count);
  int (*commUserRank)(void *comm, int *rank);
  int (*commCuDevice)(void *comm, int *device);
  int (*commGetAsyncError)(void *comm, int *asyncError); /**< may be NULL */
  const char *(*getErrorString)(int result);             /**< may be NULL */
  /* Later members (0.2), for communicators past one node (docs/runtime.md,
   * "Past one node"); may be NULL, and a caller built against an older
   * tleNcclFunctions_t (a smaller `size`) has none. NCCL 2.28's device API:
   * ncclGetVersion, ncclDevCommCreate(comm, const ncclDevCommRequirements*,
   * ncclDevComm*) and ncclDevCommDestroy(comm, const ncclDevComm*). */
  int (*getVersion)(int *version);
  int (*devCommCreate)(void *comm, const void *requirements, void *outDevComm);
  int (*devCommDestroy)(void *comm, const void *devComm);
  /* Later still, for one-sided transfers over GIN (a smaller `size` has
   * none; buffers then have no NCCL window): ncclCommWindowRegister(comm,
   * buff, size, ncclWindow_t*, winFlags) and ncclCommWindowDeregister(comm,
   * ncclWindow_t). */
  int (*commWindowRegister)(void *comm, void *buff, size_t size,
                            void **outWindow, int winFlags);
  int (*commWindowDeregister)(void *comm, void *window);
} tleNcclFunctions_t;

/** One rank's communicator over the ranks of an existing NCCL communicator
 *  `ncclComm` (an ncclComm_t; its rank, size and CUDA device), without a
 *  bootstrap of TLE's own: its exchanges (at creation and in tleMemAlloc)
 *  are ncclAllGather calls on `ncclComm`, on a stream of TLE's. Collective
 *  like an NCCL call: every rank calls it, ranks of one process from one
 *  thread each. `nccl`: the caller's NCCL functions, or NULL for those of
 *  the libnccl.so.2 already loaded in this process. `config` NULL means
 *  the defaults with the CUDA backend. The NCCL communicator must outlive
 *  the TLE one's collective calls; destroying the TLE communicator leaves
 *  it alone. NCCL carries no file descriptors: across processes the CUDA
 *  backend shares legacy IPC handles (tleAllocCuMem fails with
 *  tleNotSupported, tleAllocAuto takes cudaMalloc) and the emulator cannot
 *  share memory at all. A step that times out leaves its all-gather queued
 *  on the NCCL communicator (abort that with ncclCommAbort). */
TLE_API tleResult_t tleCommInitFromNccl(tleComm_t *outComm, void *ncclComm,
                                        const tleNcclFunctions_t *nccl,
                                        const tleConfig_t *config);

/** All ranks in this process; devices[i] is rank i's GPU (ignored by the
 *  emulator; may be NULL for 0..nRanks-1). A device may repeat: ranks
 *  sharing one GPU, each launching on a stream of its own, whose kernels
 *  must then be resident side by side (docs/gpu.md, "Ranks sharing one
 *  GPU"). */
TLE_API tleResult_t tleCommInitAll(tleComm_t *outComms, int nRanks,
                                   const int *devices,
                                   const tleConfig_t *config);

/** Make every device wait on `comm` give up (tleAborted) within a bounded
 *  time, while kernels run: one store to the communicator's fault word in
 *  host memory (every rank of a tleCommInitAll set). Thread-safe and
 *  async-signal-safe: no lock, no allocation, no CUDA call. Afterwards the
 *  communicator can only be destroyed; other calls return tleAborted.
 *  Calling it again is harmless. */
TLE_API tleResult_t tleCommAbort(tleComm_t comm);

/** Release the communicator. Not collective and never blocks on peers. */
TLE_API tleResult_t tleCommDestroy(tleComm_t comm);
TLE_API tleResult_t tleCommRank(tleComm_t comm, int *outRank);
TLE_API tleResult_t tleCommSize(tleComm_t comm, int *outSize);
/** The node of `comm`'s rank and the ranks per node: a communicator of
 *  nodes (tleConfig_t::ranksPerNode) has world rank node * ranksPerNode +
 *  local rank, and tleCommRank / tleCommSize give the world's; one node: 0
 *  and tleCommSize. */
TLE_API tleResult_t tleCommNode(tleComm_t comm, int *outNode,
                                int *outRanksPerNode);
TLE_API tleResult_t tleCommBackend(tleComm_t comm, tleBackend_t *outBackend);

/** The pointer a kernel takes as its communicator argument. */
TLE_API tleResult_t tleCommGetDevComm(tleComm_t comm, void **outDevComm);

/** Allocate a symmetric buffer: collective over the communicator (every
 *  rank calls it with the same size). The memory is zero-filled. */
TLE_API tleResult_t tleMemAlloc(tleComm_t comm, size_t bytes, tleMem_t *outMem);
/** The same for every rank of a tleCommInitAll set, from one thread. */
TLE_API tleResult_t tleMemAllocAll(const tleComm_t *comms, int nRanks,
                                   size_t bytes, tleMem_t *outMems);
/** Make a buffer that is already mapped into every rank a TLE buffer: the
 *  result's handle works with flagcxGetIntraPointerS / tle.intra_pointer
 *  like tleMemAlloc's (PyTorch's symmetric memory, an NCCL window, NVSHMEM's
 *  heap, another TLE buffer). `localPtr` is this rank's copy, `bytes` long;
 *  `peerPtrs[p]` (comm size entries, peerPtrs[rank] == localPtr) is rank p's
 *  copy as this process addresses it. With peerPtrs NULL every rank's
 *  localPtr is taken as valid for all ranks: true of ranks in one process,
 *  and across processes only of memory mapped at the same address in each
 *  (checked on GPUs: the address must be memory of that peer's device).
 *  Collective: every rank calls it with the same size. TLE checks that this
 *  rank can reach every copy and enables peer access between GPUs of one
 *  process, but maps, unmaps and frees nothing: the memory must outlive
 *  the handle, and tleMemFree of it leaves the memory alone. */
TLE_API tleResult_t tleMemImport(tleComm_t comm, void *localPtr, size_t bytes,
                                 void *const *peerPtrs, tleMem_t *outMem);
/** The same for every rank of a tleCommInitAll set, from one thread:
 *  localPtrs[r] is rank r's copy, the address of it for every rank. */
TLE_API tleResult_t tleMemImportAll(const tleComm_t *comms, int nRanks,
                                    void *const *localPtrs, size_t bytes,
                                    tleMem_t *outMems);
/** Release this rank's handle. Not collective: each rank frees its own, and
 *  a rank's copy stays mapped for peers that have not freed theirs yet.
 *  Imported memory (tleMemImport) is not the handle's: it stays as it is. */
TLE_API tleResult_t tleMemFree(tleMem_t mem);
/** Device pointer to the buffer's handle (the kernel's `mem` argument). */
TLE_API tleResult_t tleMemGetHandle(tleMem_t mem, void **outHandle);
/** This rank's copy of the buffer (device memory on GPUs). */
TLE_API tleResult_t tleMemGetLocalPtr(tleMem_t mem, void **outPtr);

/** Register memory the caller already allocated as a symmetric buffer:
 *  kernels then reach every rank's copy through the handle, as with
 *  tleMemAlloc. Collective: every rank passes its own `ptr` and the same
 *  `bytes`, and gets a handle whose tleMemGetLocalPtr is `ptr`. The range
 *  must lie in one allocation that the backend can share:
 *  - CUDA, one process per rank: device memory of this rank's GPU from
 *    cudaMalloc (directly, through PyTorch's default caching allocator, or
 *    from tleShareableAlloc). Memory that legacy CUDA IPC cannot export
 *    (cuMem/VMM allocations such as PyTorch's expandable_segments, or a
 *    cudaMallocAsync pool) is refused with tleInvalidArgument and a detail
 *    that says what to allocate instead.
 *  - CPU backend, one process per rank: memory from tleShareableAlloc with
 *    device -1 (a memory file; plain malloc memory cannot be mapped by
 *    another process and is refused).
 *  - ranks of one process (tleCommInitAll): any memory of the rank's device
 *    (any host memory on the CPU backend).
 *  A failure on one rank fails every rank. tleMemFree of a registration
 *  unmaps the peers' copies and leaves `ptr` allocated; keep the memory
 *  alive on every rank until every rank has freed its registration. */
TLE_API tleResult_t tleMemRegister(tleComm_t comm, void *ptr, size_t bytes,
                                   tleMem_t *outMem);
/** Memory that tleMemRegister can share with other processes, shaped as
 *  PyTorch's CUDAPluggableAllocator wants its malloc (torch.cuda.MemPool
 *  over it). `device` >= 0: cudaMalloc on that GPU (NULL in a build without
 *  CUDA). `device` < 0: host memory in a memory file, for the CPU backend,
 *  page-aligned and zero-filled. `stream` is ignored. NULL when the
 *  allocation fails, with the reason as the thread's last error detail. */
TLE_API void *tleShareableAlloc(size_t bytes, int device, void *stream);
/** Frees what tleShareableAlloc returned (`bytes` and `stream` are
 *  ignored); NULL is ignored. */
TLE_API void tleShareableFree(void *ptr, size_t bytes, int device,
                              void *stream);
/** Copy the epochs of barrier slots first..first+count-1 of this rank into
 *  outEpochs: the number of rounds each slot completed here (modulo 2^32),
 *  what tools print as barrier rounds. Slots 0..nBarriers-1 are team
 *  intra's; the teams' own slots follow, world's at nBarriers + s and
 *  inter's at 2 * nBarriers + s, so first + count may reach 3 * nBarriers.
 *  Call it between launches (it reads device memory synchronously). */
TLE_API tleResult_t tleCommGetBarrierEpochs(tleComm_t comm, uint32_t first,
                                            uint32_t count,
                                            uint32_t *outEpochs);

/** Copy this rank's signal words first..first+count-1 into outValues.
 *  Call it between launches (it reads device memory synchronously). */
TLE_API tleResult_t tleCommGetSignals(tleComm_t comm, uint32_t first,
                                      uint32_t count, uint64_t *outValues);

/** Read and clear the device error record of `comm`. Returns tleSuccess and
 *  info->result == tleSuccess when nothing was recorded; otherwise fills
 *  `info` (message: "rank 1 block 0 thread 0: barrier wait timed out after
 *  1000 ms on slot 3 epoch 7; missing peers: 0,2"), makes the message the
 *  thread's last error detail and returns the recorded code (info->result). */
TLE_API tleResult_t tleCommGetError(tleComm_t comm, tleErrorInfo *info);

/** One report for the whole job when a wait failed on some rank
 *  (docs/runtime.md, "The job's report"): every rank's error record
 *  (read, not cleared) merged into who waits where for whom, who left the
 *  kernel, who is dead (the watchdog's view) or silent, and the likely
 *  culprit, as one JSON object written to `buf` (cut to `size` - 1 bytes
 *  and NUL-terminated; `*needed`, when not NULL, is the whole document's
 *  size with its NUL). The ranks of a tleCommInitAll set are read directly,
 *  so any one of them may call it alone; with one process per rank it is
 *  collective over the communicator's bootstrap, and a rank that does not
 *  join within config->bootstrapTimeoutMs is reported as silent. When a
 *  rank failed, the lowest rank that answered prints the report to stderr,
 *  the report is the thread's last error detail and the first failing
 *  rank's status is returned; tleSuccess when no rank failed. `comm` NULL:
 *  the last report this thread gathered, without a gather. */
TLE_API tleResult_t tleCommGetJobError(tleComm_t comm, char *buf, size_t size,
                                       size_t *needed);

/** Call sites (docs/runtime.md, "Call sites"). A failed wait's record
 *  carries the 32-bit id its compiler gave the call (tlec from the op's
 *  location, tle.language from the Python line, the typed C++ API from the
 *  caller's line on the emulator); the reports turn it back into text
 *  through one table per process. tleSiteRegister enters `text`
 *  ("file:line:col") for `id`: the same pair again is a no-op;
 *  tleInvalidArgument for id 0, an empty or NULL text, or an id that holds
 *  another text (the first one stays). Thread-safe. */
TLE_API tleResult_t tleSiteRegister(uint32_t id, const char *text);
/** The id tlec and the front ends give `text` (FNV-1a of its bytes, bit 31
 *  cleared, never 0), registered with it. */
TLE_API uint32_t tleSiteRegisterText(const char *text);
/** The text of site `id`, or NULL (0, or never registered). Valid for the
 *  life of the process. */
TLE_API const char *tleSiteText(uint32_t id);

/** Traces of the barrier (docs/runtime.md, "Traces"): from now on the device
 *  library records every barrier event of `comm` (each group's arrive, and
 *  the begin and end of its wait or sync, with %globaltimer on GPUs) into a
 *  ring of the latest `capacity` events (a power of two up to 2^24; 0:
 *  65536) in host-readable memory, so a trace survives a failed launch.
 *  Call between launches. Costs the barrier nothing while off. */
TLE_API tleResult_t tleCommTraceStart(tleComm_t comm, uint32_t capacity);
/** Stops recording and frees the ring (events not yet written are lost). */
TLE_API tleResult_t tleCommTraceStop(tleComm_t comm);
/** Writes the events the rings of `comms` recorded since the last write to
 *  `path` as one Chrome/Perfetto JSON document (a process per rank, a
 *  thread per recording thread, ts in microseconds from the first event),
 *  and empties the rings. Call after the launches ended and before
 *  tleCommTraceStop: a communicator with no ring is tleInvalidArgument. */
TLE_API tleResult_t tleTraceWrite(const tleComm_t *comms, int nComms,
                                  const char *path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLE_TLE_H */
