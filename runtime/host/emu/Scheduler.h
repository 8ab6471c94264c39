//===- Scheduler.h - The emulator's fiber scheduler -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One Scheduler runs one launch: every emulated thread of every rank is a
// fiber (emu/Fiber.h), and the scheduler, on the calling OS thread, resumes
// one runnable fiber at a time, chosen by a seeded PRNG whose output does not
// depend on the platform. A fiber runs until it calls a hook (block or warp
// sync, a spin wait or hint, an abort) or exits; nothing else switches, so
// the seed alone fixes the schedule. A fiber that yields does the
// scheduler's step itself and resumes the next fiber directly (one switch
// per step, not two through the scheduler's loop), with the same draws the
// loop makes; the loop's own stack serves exits, messages due, idleness
// and the launch's end. A watchdog thread watches the running
// fiber's wall-clock time (emu/Fatal.h). This header is internal to the
// emulator: the public entry points are in tle/emu.h, the C hooks in
// tle/detail/EmuHooks.h.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_SCHEDULER_H
#define TLE_HOST_EMU_SCHEDULER_H

#include "emu/AddressMap.h"
#include "emu/Check.h"
#include "emu/Fatal.h"
#include "emu/Fiber.h"
#include "emu/Race.h"
#include "emu/StackPool.h"
#include "tle/emu.h"

#include "diag/TraceJson.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tle::emu::detail {

/// xoshiro256** seeded through splitmix64, with an unbiased bounded draw
/// (Lemire's multiply-and-reject), so that a seed gives the same schedule on
/// every platform and standard library.
class Rng {
public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  /// Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);

private:
  uint64_t s[4];
};

/// splitmix64's output function, also used to derive seeds and hashes.
uint64_t mix64(uint64_t x);

/// One rank of a launch as the kernel sees it.
struct RankInfo {
  int rank = 0;
  void *devComm = nullptr;
  void **args = nullptr; ///< tleEmuLaunch only
};

/// A validated launch.
struct Spec {
  std::vector<RankInfo> ranks;
  Dim3 grid, block;
  uint64_t seed = 0;
  uint32_t maxResident = kDefaultResidentBlocks;
  size_t stackBytes = kDefaultStackBytes;
  /// No-progress deadline (LaunchOptions::timeoutMs); 0: none.
  uint64_t timeoutNs = 0;
  /// Some ranks of the communicator run elsewhere (another process or OS
  /// thread): a state where every local thread waits is not a deadlock.
  bool partial = false;
  bool trace = false;
  /// Follow happens-before and check symmetric-memory accesses (Race.h).
  bool raceCheck = false;
  /// The symmetric buffers the race checker watches.
  std::vector<RaceRegion> regions;
  /// What a replay hint puts before the seed (LaunchOptions::replayWith).
  std::string replayWith = "TLE_EMU_SEED=";
  /// The simulated network's latency (LaunchOptions::netLatencySteps).
  uint64_t netLatencySteps = kDefaultNetLatencySteps;
};

/// A net add in flight (tleEmuNetAdd): it lands on `word` when the network
/// clock reaches `due`; `seq` orders those due together as they were sent.
struct NetMessage {
  uint64_t due = 0;
  uint64_t seq = 0;
  uint64_t *word = nullptr;
  uint64_t value = 0;
  int32_t sender = 0; ///< world rank
  Snap release;       ///< the sender's clock, for the race checker
  /// A transfer (tleEmuNetCopy, tleEmuNetValue): `bytes` from `src` (or
  /// the carried `inlineValue`) to `dst` when it lands, then the add above
  /// (if `word`) and `counterValue` to `counter` (if set), all by the
  /// sending rank's network (Scheduler::nics).
  bool transfer = false;
  bool carried = false; ///< the source is inlineValue
  void *dst = nullptr;
  const void *src = nullptr;
  uint64_t bytes = 0;
  uint64_t inlineValue = 0;
  uint64_t *counter = nullptr;
  uint64_t counterValue = 0;
  int senderIndex = 0; ///< the sender's index in Spec::ranks
  /// `word` is a signal word or a counter (every transfer's, and a net add
  /// into one), not a barrier's net word: the race checker adds it to the
  /// word's signal history when it lands.
  bool signal = false;
};

/// The kernel body every thread runs.
using Body = std::function<void(const RankInfo &)>;

/// How a run ended.
enum class Outcome {
  Completed,       ///< every thread exited
  Aborted,         ///< a thread called tleEmuAbortLaunch
  Deadlock,        ///< every thread blocked, nothing can progress
  NoProgress,      ///< only polls (spin hints) for the whole deadline
  KernelException, ///< a C++ exception escaped a kernel body
  Internal,        ///< a hook was misused (message says how)
  CheckFailed,     ///< a check (emu/Check.h) reported a bug
};

struct RunResult {
  Outcome outcome = Outcome::Completed;
  /// CheckFailed: the failing check's result code (Check::result).
  tleResult_t checkResult = tleSuccess;
  int rankIndex = -1; ///< index into Spec::ranks of the failing rank
  std::string message;
  uint64_t steps = 0;
  uint64_t scheduleHash = 0;
  /// Deadlock: the first waiting thread (by rank, block, thread).
  WaitInfo wait{};
  /// Deadlock: the ranks that still have live threads, which could signal
  /// a word if they were not blocked themselves.
  PeerMask liveRanks = {};
  int32_t block = -1, thread = -1;
  /// The source location the failing thread was at (tleEmuSite), or null.
  const char *site = nullptr;
  /// Which ranks had exited when the launch failed (Scheduler::rankStates).
  std::string rankStates;
};

/// One tleEmuBarrierEvent call.
struct TraceRecord {
  int32_t rank;
  uint32_t block, thread, blockSize;
  uint64_t step;
  int kind, coop, order, phase; ///< BarrierKind, CoopKind, MemoryOrder,
                                ///< TracePhase
  uint32_t slot;                ///< the slot within `team` (splitTeamSlot)
  const char *site;             ///< the op's source location, or null
  int team;                     ///< a TeamKind; kTeamIntra for signals
};

struct Block;
class Scheduler;

/// The scheduler running on the calling OS thread (Scheduler::current).
/// constinit: without it every read outside the defining file first tests
/// for (and would call) a thread-local initialisation function, twice in
/// a hook that reads it twice, since the call may change it.
[[gnu::tls_model(
    "initial-exec")]] extern constinit thread_local Scheduler *currentScheduler;

/// Why a fiber gave control back to the scheduler.
enum class Yield : uint8_t {
  NotStarted,
  BlockSync,
  WarpSync,
  Spin, ///< tleEmuSpinWait: a failed poll that says what it waits for
  Hint, ///< tleEmuSpinHint: a load that may be a poll
  Abort
};

/// Where the scheduler keeps a live thread.
enum class ThreadState : uint8_t {
  Runnable, ///< in the runnable set (possibly spinning)
  Parked,   ///< spinning, and nothing changed since its last poll
  Watching, ///< spinning on a word (WaitInfo::watch) nobody wrote since
  InSync,   ///< waiting in block or warp sync
  Done,
};

struct EmuThread {
  EmuThread() = default;
  EmuThread(const EmuThread &) = delete;
  EmuThread &operator=(const EmuThread &) = delete;

  Block *block = nullptr;
  uint32_t tid = 0; ///< linear id in the block
  uint32_t x = 0, y = 0, z = 0;
  /// Its suspended context, null while it runs and once it exited. A
  /// failed launch abandons a suspended one: nothing unwinds its stack
  /// (kernel frames may have no unwind tables); the pool unmaps it.
  FiberContext context = nullptr;
  boost::context::stack_context stack{}; ///< from the launch's pool
  void *asan = nullptr; ///< its word for AddressSanitizer (asanLeave)
  Yield reason = Yield::NotStarted;
  ThreadState state = ThreadState::Runnable;
  uint32_t pos = 0; ///< index in the runnable, parked or watching list
  WaitInfo wait{};  ///< the current spin's description
  const void *hintAddr = nullptr; ///< the current hint's address
  uint64_t hintValue = 0;         ///< and the value it loaded
  uint64_t lastSpinGen = ~0ull;   ///< progress generation at its last poll
  /// Source location of the tle op the thread is in (tleEmuSite), or of
  /// its typed C++ API call (tleEmuEnterCall), or null.
  const char *site = nullptr;
  /// The outermost device-library call the thread is in (tleEmuEnterCall:
  /// an entry point's name, or "" for a typed API call), or null; calls
  /// nest `callDepth` deep. The report folds a call's threads into one line.
  const char *call = nullptr;
  uint32_t callDepth = 0;
  bool callSetSite = false; ///< `site` is the outermost call's
  /// Source location of its last reported memory access (tleEmuAccess),
  /// and of the load its current hint follows.
  const char *accessSite = nullptr;
  const char *hintSite = nullptr;
  /// It stored to memory (tleEmuAccess: a store, atomic store or
  /// read-modify-write) since it last gave control back: a spin that
  /// follows is a new wait, however like the last one it looks.
  bool storedSinceYield = false;
  /// It waits in a block sync and then at once in the next one
  /// (syncBlockTwice): the first sync's release counts it as arrived at the
  /// second instead of making it runnable.
  bool syncTwice = false;
  uint32_t raceId = 0; ///< its id in the race checker
};

struct RankState;

struct Block {
  RankState *rank = nullptr;
  uint32_t id = 0; ///< linear block id
  uint32_t x = 0, y = 0, z = 0;
  uint32_t size = 0; ///< threads
  uint32_t live = 0;
  uint32_t syncArrived = 0;
  uint32_t pos = 0; ///< index in RankState::active
  std::vector<uint32_t> warpLive, warpArrived;
  std::unique_ptr<EmuThread[]> threads;
  std::map<uint32_t, std::vector<uint32_t>> scratch;
};

struct RankState {
  RankInfo info;
  int index = 0; ///< in Spec::ranks
  uint32_t nextBlock = 0;
  std::vector<std::unique_ptr<Block>> active;
};

class Scheduler {
public:
  Scheduler(const Spec &spec, Body body);
  ~Scheduler();
  Scheduler(const Scheduler &) = delete;
  Scheduler &operator=(const Scheduler &) = delete;

  RunResult run();
  std::vector<TraceRecord> takeTrace() { return std::move(trace); }

  /// The scheduler and thread of the calling fiber (null off a fiber).
  static Scheduler *current() { return currentScheduler; }
  EmuThread *currentThread() const { return running; }
  const Spec &spec() const { return config; }

  // The hooks, called on the running fiber. The most frequent are inline
  // (each is called once or more per thread and barrier).
  void syncBlock() { yieldToScheduler(Yield::BlockSync); }
  /// Two block syncs with nothing between (tleEmuSyncBlockTwice): one step.
  void syncBlockTwice() {
    running->syncTwice = true;
    yieldToScheduler(Yield::BlockSync);
  }
  void syncWarp() { yieldToScheduler(Yield::WarpSync); }
  void spinWait(const WaitInfo *info);
  void spinHint(const void *addr, uint64_t value);
  [[noreturn]] void abortLaunch();
  /// Ends the launch with Outcome::Internal (a misused hook).
  [[noreturn]] void internalError(std::string message);
  uint32_t *blockScratch(uint32_t id, uint32_t n);
  void barrierEvent(const void *comm, int kind, int coop, uint32_t slot,
                    int order, int phase);
  void site(const char *where) { running->site = where; }
  void enterCall(const char *name, const char *file, uint32_t line) {
    EmuThread *t = running;
    // Only the outermost call counts: it is the one the kernel wrote.
    if (t->callDepth++ == 0)
      enterOutermost(t, name, file, line);
  }
  void leaveCall() {
    EmuThread *t = running;
    if (t->callDepth == 0 || --t->callDepth > 0)
      return;
    t->call = nullptr;
    if (t->callSetSite) {
      t->site = nullptr;
      t->callSetSite = false;
    }
  }
  [[gnu::always_inline]] void access(const void *addr, uint64_t bytes, int kind,
                                     int order, const char *where) {
    // The device library's own accesses carry no location: they are the
    // running op's (a signal word's polls, a put's copy).
    if (!where)
      where = running->site;
    if (onlyRace) {
      if (std::optional<std::string> report = onlyRace->access(
              running->raceId, addr, bytes, kind, order, where))
        failCheck(*onlyRace, std::move(*report));
      return;
    }
    accessAll(addr, bytes, kind, order, where);
  }
  /// tleEmuSignal on the running fiber: the race checker's signal history
  /// (event a SignalEvent), the running op's site as the access's.
  void signal(const void *word, int event, uint64_t value, uint64_t operand,
              int order);
  /// A symmetric-buffer address in words ("buffer 'flag' (rank 1's copy)
  /// byte 0"), or "" when the race checker does not know it.
  std::string describeAddress(const void *addr) const;
  /// Ends the launch with `outcome` and `message`, blaming the running
  /// thread.
  [[noreturn]] void failLaunch(Outcome outcome, std::string message);
  /// Ends the launch with `check`'s report, blaming the running thread.
  [[noreturn]] void failCheck(const Check &check, std::string report);
  /// Whether some check hears memory accesses (access() has work to do).
  bool racing() const { return !accessChecks.empty(); }
  /// tleEmuNetAdd on the running fiber: sends the add, a release.
  void netAdd(const void *comm, uint64_t *word, uint64_t value);
  /// tleEmuNetCopy and tleEmuNetValue on the running fiber: sends a
  /// transfer (NetMessage's fields).
  void netCopy(void *dst, const void *src, uint64_t bytes, uint64_t *signal,
               uint64_t signalValue, uint64_t *counter, uint64_t counterValue,
               const uint64_t *carried);
  /// Whether some parked thread waits for a write (wake() has work to do).
  bool watched() const { return !watching.empty(); }
  /// `addr` was written (a store, atomic or signal of the running thread,
  /// or the network): the threads that watch it become runnable.
  void wake(const void *addr) {
    if (!watching.empty())
      wakeWatchers(addr);
  }
  /// tleEmuNetFlush: the running rank's transfers in flight; at 0 the
  /// running thread acquires what its rank's network did.
  uint64_t netFlush();
  /// The network clock: steps, plus those skipped waiting for a message.
  uint64_t netNow() const { return steps + netSkipped; }

  /// Writes the report of fatal signal `sig` at `addr` on the running fiber
  /// into `out` (async-signal-safe).
  void describeFault(SafeText &out, int sig, const void *addr) const noexcept;

private:
  void startBlock(RankState &rank);
  void finishThread(EmuThread *t);
  /// The scheduler's work after `t` yielded (reason `t->reason`; `before`
  /// and `beforeWait` what it yielded for at its previous step).
  void afterYield(EmuThread *t, Yield before, const WaitInfo &beforeWait);
  void progress();
  void releaseSync(Block *b, bool warp, uint32_t warpIndex);
  void addRunnable(EmuThread *t);
  void removeRunnable(EmuThread *t);
  void park(EmuThread *t);
  void unpark(EmuThread *t);
  /// Parks a spinner on its wait's word (Watching) until wake() sees a
  /// write to it, and puts it back.
  void watch(EmuThread *t);
  void unwatch(EmuThread *t);
  void wakeWatchers(const void *addr);
  /// Fills in the missing peers of every thread suspended in a spin wait
  /// (WaitInfo::peers), for a report.
  void resolveWaits();
  bool unparkStale();
  void unparkAll();
  void unparkHints();
  /// Ends the running thread's step (`why`): the scheduler's work for it,
  /// then the next step, on this fiber or through the scheduler.
  void yieldToScheduler(Yield why);
  /// A step's start: `t` becomes the running thread.
  void beginStep(EmuThread *t);
  /// The next step's thread, drawn among the runnable ones (the one draw
  /// of a step, whether the loop or a yielding fiber makes it), begun.
  EmuThread *drawStep();
  /// Keeps the context of what resumed the calling fiber; `stack` is the
  /// stack it came from (asanArrive).
  void adopt(FiberContext from, FiberBounds stack = {});
  /// A thread's fiber: its whole life, from its first switch in.
  static void threadEntry(FiberTransfer from);
  /// enterCall's outermost call: names it, and its site if none is set.
  void enterOutermost(EmuThread *t, const char *name, const char *file,
                      uint32_t line);
  void teardown();
  /// The run, in its steps: the ranks, checks and first blocks; one
  /// thread's step; what to do when no thread is runnable (false: the
  /// launch ends, `failure` says why); the loop over them.
  void setUp();
  void stepOne();
  bool whenIdle();
  void loop();
  /// Whether the launch went the whole deadline without progress (measured
  /// from the first call at the current progress generation).
  bool pastDeadline();
  std::string deadlockReport(RunResult &result, const std::string &head) const;
  /// Lands every message due by now; whether it landed any.
  bool deliverDue();
  void landTransfer(NetMessage &m);
  /// "rank 5 (node 1, local 1)" with several nodes, else "rank 5".
  std::string rankName(int32_t worldRank) const;
  /// A net wait's missing ranks: the candidates (`wait.missing`) whose
  /// adds to the word it polls have not reached its epoch.
  PeerMask netMissing(const WaitInfo &wait) const;
  /// "rank 2 has exited; ranks 0, 1 are still running" (or "" when all run).
  std::string rankStates() const;

  Spec config;
  Body body;
  Rng rng;
  StackPool stacks;
  std::vector<RankState> ranks;
  std::vector<EmuThread *> runnable, parked, watching;
  /// The Watching threads by the word they wait on (no two entries for one
  /// thread), and the progress steps since a watcher was last resumed at
  /// random (progress()).
  AddressMap<std::vector<EmuThread *>> watchers;
  std::vector<EmuThread *> wokenScratch; ///< wakeWatchers'
  uint32_t sinceWatcherSample = 0;
  /// The running step's: what its thread yielded for before it (and the
  /// wait, if that was a spin); an exception the scheduler's work for a
  /// yield threw on a fiber.
  Yield stepBefore = Yield::NotStarted;
  WaitInfo beforeWait{};
  std::exception_ptr stepError;
  /// The scheduler's context while fibers run, and the thread whose fiber
  /// resumed the one now running (null: the scheduler did), which adopt()
  /// gives its context to.
  FiberContext mainCtx = nullptr;
  /// The scheduler's stack and word for AddressSanitizer (Fiber.h): the
  /// stack is learnt when a fiber first arrives from it.
  FiberBounds mainStack;
  void *mainAsan = nullptr;
  EmuThread *switchedFrom = nullptr;
  /// releaseSync's scratch: the race ids of a sync's members.
  std::vector<uint32_t> syncMembers;
  uint64_t parkedHints = 0;  ///< parked threads whose last yield is a hint
  uint64_t stillGen = ~0ull; ///< generation pastDeadline() last saw
  uint64_t stillSinceNs = 0; ///< when it first saw it
  Heartbeat heartbeat;
  EmuThread *running = nullptr;
  uint64_t liveThreads = 0;
  uint64_t generation = 0;
  uint64_t steps = 0;
  uint64_t hash = 0;
  bool stop = false;
  RunResult failure;
  std::vector<TraceRecord> trace;
  /// The happens-before clocks (null without the race check), and the
  /// launch's checks by the events they hear (emu/Checks.def).
  std::shared_ptr<RaceChecker> race;
  std::vector<std::shared_ptr<Check>> accessChecks, barrierChecks;
  /// The race checker when it is the only check of accesses (then access()
  /// calls it directly: an access is the checker's most frequent event, and
  /// the dispatch through the list and a virtual call was about a tenth of
  /// the checker's instructions in a 72-rank launch).
  RaceChecker *onlyRace = nullptr;
  /// access() through every check in accessChecks.
  void accessAll(const void *addr, uint64_t bytes, int kind, int order,
                 const char *where);
  /// Hands `e` to the access checks; the first report, and whose.
  std::optional<std::string> checkAccess(const AccessEvent &e,
                                         const Check *&who);
  /// The network: messages in flight (a heap on due, then seq), steps the
  /// clock skipped, and how much each sender's messages added to each word
  /// (for the missing ranks of a net wait).
  std::vector<NetMessage> inFlight;
  uint64_t netSkipped = 0;
  uint64_t netSeq = 0;
  std::map<std::pair<const void *, int32_t>, uint64_t> netDelivered;
  /// Per rank (Spec::ranks order): its network's id in the race checker
  /// (the reads and writes of its transfers are the network's), and its
  /// transfers in flight.
  std::vector<uint32_t> nics;
  std::vector<uint64_t> netPending;
  /// Ranks per node when the launch's communicators have several nodes,
  /// else 0 (rankName).
  int32_t ranksPerNode = 0;
};

/// The trace in the form of TraceJson.h's writer.
std::vector<BarrierTraceRecord>
toTraceRecords(const std::vector<TraceRecord> &trace);

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_SCHEDULER_H
