//===- Scheduler.cpp - The emulator's deterministic fiber scheduler -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The run loop and the scheduler side of the hooks.
//
// Progress and deadlock. A spin wait is a poll that failed. In-process, shared
// memory changes only when some fiber runs a step that is not a failed
// re-poll, so the scheduler counts such steps in a progress generation. A
// spinning fiber whose last poll saw the current generation cannot succeed by
// polling again and is parked, out of the runnable set. When no fiber is
// runnable, parked fibers that polled before the latest progress are put
// back; if there are none, every live thread waits on something that only a
// blocked thread could provide: a deadlock, reported at once. Each progress
// step also unparks one random parked fiber, so spinners observe intermediate
// states and a livelocked kernel cannot starve them.
//
// Waits on a word. A spin wait of the device library names the word whose
// change may end it (WaitInfo::watch: a barrier flag short of its target, a
// signal word). Such a spinner watches the word instead of being parked: the
// stores, atomics and signal adds that reach tleEmuAccess or tleEmuSignal,
// and the network's deliveries, wake the threads that watch the address
// they write, in the order they began to watch. A barrier over N ranks then
// costs each waiter one poll per arrival it needed, not one per progress
// step of any thread; and its missing peers are read only for a report
// (WaitInfo::peers), not on every failed poll. A write the scheduler does
// not see (plain host code) only delays a watcher: when nothing else can
// run, watchers that polled before the latest progress are resumed like
// parked ones, and one progress step in 64 resumes a random watcher, so that
// deadlines and the fault word (tleCommAbort) are still seen while other
// threads run.
//
// Spin hints. tleEmuSpinHint marks a load that may be a poll of a flag, one
// the scheduler is not told the meaning of, so it cannot tell a deadlock
// from a loop that stores between its loads. It treats consecutive hints
// of one thread as polls (no progress) and parks the thread like a spinner,
// but when nothing else can run it resumes the hinting threads instead of
// reporting a deadlock, and ends the launch only when the whole deadline
// passes without progress (Outcome::NoProgress).
//
//===----------------------------------------------------------------------===//

#include "emu/Scheduler.h"

#include "emu/OffFiber.h"
#include "emu/OpCounts.h"
#include "tle/detail/DevComm.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace tle::emu::detail {

// Read by every hook, and compiled kernels call one after each memory
// access: the initial-exec model makes it one load off the thread pointer
// instead of a __tls_get_addr call. It takes 8 bytes of the static TLS
// surplus glibc keeps for libraries loaded with dlopen (Python's ctypes).
[[gnu::tls_model(
    "initial-exec")]] constinit thread_local Scheduler *currentScheduler =
    nullptr;

namespace {
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

bool sameWait(const WaitInfo &a, const WaitInfo &b) {
  return a.comm == b.comm && a.rank == b.rank && a.slot == b.slot &&
         a.epoch == b.epoch && samePeers(a.missing, b.missing) &&
         a.what == b.what && a.signal == b.signal && a.seen == b.seen &&
         a.wanted == b.wanted;
}

constexpr uint32_t kWarpSize = 32;

/// Makes a scheduler the calling OS thread's current one for its run, and
/// restores the outer one however the run ends.
class CurrentScope {
public:
  explicit CurrentScope(Scheduler *s) : outer(currentScheduler) {
    currentScheduler = s;
  }
  ~CurrentScope() { currentScheduler = outer; }
  CurrentScope(const CurrentScope &) = delete;
  CurrentScope &operator=(const CurrentScope &) = delete;

private:
  Scheduler *outer;
};
} // namespace

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  for (uint64_t &word : s) {
    seed += 0x9e3779b97f4a7c15ull;
    word = mix64(seed);
  }
}

uint64_t Rng::next() {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

static uint64_t blocksPerRank(const Spec &spec) {
  return uint64_t(spec.grid.x) * spec.grid.y * spec.grid.z;
}

static uint32_t threadsPerBlock(const Spec &spec) {
  return spec.block.x * spec.block.y * spec.block.z;
}

Scheduler::Scheduler(const Spec &spec, Body body)
    : config(spec), body(std::move(body)), rng(spec.seed),
      stacks(spec.stackBytes) {
  hash = mix64(spec.seed);
}

Scheduler::~Scheduler() { teardown(); }

void Scheduler::addRunnable(EmuThread *t) {
  t->state = ThreadState::Runnable;
  t->pos = static_cast<uint32_t>(runnable.size());
  runnable.push_back(t);
}

void Scheduler::removeRunnable(EmuThread *t) {
  EmuThread *last = runnable.back();
  runnable[t->pos] = last;
  last->pos = t->pos;
  runnable.pop_back();
}

void Scheduler::park(EmuThread *t) {
  removeRunnable(t);
  parkedHints += t->reason == Yield::Hint;
  t->state = ThreadState::Parked;
  t->pos = static_cast<uint32_t>(parked.size());
  parked.push_back(t);
}

void Scheduler::unpark(EmuThread *t) {
  EmuThread *last = parked.back();
  parked[t->pos] = last;
  last->pos = t->pos;
  parked.pop_back();
  parkedHints -= t->reason == Yield::Hint;
  addRunnable(t);
}

void Scheduler::watch(EmuThread *t) {
  removeRunnable(t);
  t->state = ThreadState::Watching;
  t->pos = static_cast<uint32_t>(watching.size());
  watching.push_back(t);
  watchers[t->wait.watch].push_back(t);
}

void Scheduler::unwatch(EmuThread *t) {
  EmuThread *last = watching.back();
  watching[t->pos] = last;
  last->pos = t->pos;
  watching.pop_back();
  std::vector<EmuThread *> &on = *watchers.find(t->wait.watch);
  on.erase(std::find(on.begin(), on.end(), t));
  addRunnable(t);
}

void Scheduler::wakeWatchers(const void *addr) {
  std::vector<EmuThread *> *on = watchers.find(addr);
  if (!on || on->empty())
    return;
  // In the order they began to watch: the schedule depends only on what
  // the launch did, never on the table's layout. The list is swapped out
  // and back, so that its storage serves the word's next watchers (a word
  // polled every round costs no allocation per round).
  std::vector<EmuThread *> &woken = wokenScratch;
  woken.swap(*on);
  for (EmuThread *t : woken) {
    EmuThread *last = watching.back();
    watching[t->pos] = last;
    last->pos = t->pos;
    watching.pop_back();
    addRunnable(t);
  }
  woken.clear();
}

bool Scheduler::unparkStale() {
  bool any = false;
  // Walk backwards: unpark() moves the last element into the hole.
  for (size_t i = parked.size(); i-- > 0;) {
    if (i < parked.size() && parked[i]->lastSpinGen != generation) {
      unpark(parked[i]);
      any = true;
    }
  }
  // A watcher is woken by the write it waits for; one that polled before
  // the latest progress is resumed here too, so that a write the scheduler
  // did not see (plain host code, a word watched at another address) costs
  // time, never a false deadlock.
  for (size_t i = watching.size(); i-- > 0;) {
    if (i < watching.size() && watching[i]->lastSpinGen != generation) {
      unwatch(watching[i]);
      any = true;
    }
  }
  return any;
}

void Scheduler::unparkAll() {
  while (!parked.empty())
    unpark(parked.back());
  while (!watching.empty())
    unwatch(watching.back());
}

void Scheduler::resolveWaits() {
  for (RankState &rank : ranks)
    for (auto &block : rank.active)
      for (uint32_t i = 0; i < block->size; ++i) {
        EmuThread &t = block->threads[i];
        // Suspended in the spin wait whose state `peersCtx` points into.
        if (t.state != ThreadState::Done && t.reason == Yield::Spin &&
            t.wait.peers) {
          t.wait.missing = waitMissing(t.wait);
          t.wait.peers = nullptr;
        }
      }
}

void Scheduler::unparkHints() {
  for (size_t i = parked.size(); i-- > 0;)
    if (i < parked.size() && parked[i]->reason == Yield::Hint)
      unpark(parked[i]);
}

bool Scheduler::pastDeadline() {
  if (stillGen != generation) {
    stillGen = generation;
    stillSinceNs = steadyNowNs();
    return false;
  }
  return config.timeoutNs && steadyNowNs() - stillSinceNs >= config.timeoutNs;
}

void Scheduler::progress() {
  ++generation;
  if (!parked.empty())
    unpark(parked[rng.below(parked.size())]);
  // A watcher needs no poll until its word is written, but a wait also
  // ends by its deadline or the fault word (tleCommAbort), which no write
  // to the word announces: one progress step in 64 resumes one at random.
  if (!watching.empty() && ++sinceWatcherSample >= 64) {
    sinceWatcherSample = 0;
    unwatch(watching[rng.below(watching.size())]);
  }
}

namespace {
/// The word a thread's last switch passes to the scheduler: it exited.
char exitedWord;
} // namespace

void Scheduler::threadEntry(FiberTransfer from) {
  // Entered by the first switch to the thread, which beginStep made the
  // running one.
  Scheduler *s = current();
  EmuThread *t = s->running;
  s->adopt(from.fctx, asanArrive(nullptr));
  try {
    s->body(t->block->rank->info);
  } catch (const std::bad_alloc &) {
    // Also what the checks of the thread's accesses throw when their state
    // cannot grow: not the kernel's doing as such.
    s->failure.outcome = Outcome::KernelException;
    s->failure.message = "out of memory on this thread (std::bad_alloc in "
                         "the kernel or in the emulator's checks of its "
                         "accesses)";
  } catch (const std::exception &e) {
    s->failure.outcome = Outcome::KernelException;
    s->failure.message = std::string("kernel threw: ") + e.what();
  } catch (...) {
    s->failure.outcome = Outcome::KernelException;
    s->failure.message = "kernel threw a non-standard exception";
  }
  if (s->failure.outcome == Outcome::KernelException && !s->stop) {
    s->stop = true;
    s->failure.rankIndex = t->block->rank->index;
    s->failure.block = static_cast<int32_t>(t->block->id);
    s->failure.thread = static_cast<int32_t>(t->tid);
  }
  // The scheduler finishes the thread (its step ends without a yield): it
  // may start a block, which a fiber's stack must not. Nothing switches
  // back to this context.
  asanLeave(nullptr, s->mainStack);
  switchFiber(std::exchange(s->mainCtx, nullptr), &exitedWord);
  __builtin_unreachable();
}

void Scheduler::startBlock(RankState &rank) {
  auto block = std::make_unique<Block>();
  Block *b = block.get();
  b->rank = &rank;
  b->id = rank.nextBlock++;
  b->x = b->id % config.grid.x;
  b->y = b->id / config.grid.x % config.grid.y;
  b->z = b->id / (config.grid.x * config.grid.y);
  b->size = threadsPerBlock(config);
  b->live = b->size;
  uint32_t warps = (b->size + kWarpSize - 1) / kWarpSize;
  b->warpArrived.assign(warps, 0);
  for (uint32_t w = 0; w < warps; ++w)
    b->warpLive.push_back(std::min(kWarpSize, b->size - w * kWarpSize));
  b->threads = std::make_unique<EmuThread[]>(b->size);
  for (uint32_t i = 0; i < b->size; ++i) {
    EmuThread *t = &b->threads[i];
    t->block = b;
    t->tid = i;
    t->x = i % config.block.x;
    t->y = i / config.block.x % config.block.y;
    t->z = i / (config.block.x * config.block.y);
    if (race)
      t->raceId = race->addThread({rank.info.rank, b->id, i});
    t->stack = stacks.allocate();
    t->context = makeFiber(t->stack, &Scheduler::threadEntry);
    addRunnable(t);
  }
  liveThreads += b->size;
  b->pos = static_cast<uint32_t>(rank.active.size());
  rank.active.push_back(std::move(block));
}

void Scheduler::releaseSync(Block *b, bool warp, uint32_t warpIndex) {
  uint32_t begin = warp ? warpIndex * kWarpSize : 0;
  uint32_t end = warp ? std::min(b->size, begin + kWarpSize) : b->size;
  Yield kind = warp ? Yield::WarpSync : Yield::BlockSync;
  syncMembers.clear();
  // Members that take the next block sync at once (syncBlockTwice) stay in
  // it: they are its first arrivals.
  uint32_t again = 0;
  for (uint32_t i = begin; i < end; ++i) {
    EmuThread *t = &b->threads[i];
    if (t->state == ThreadState::InSync && t->reason == kind) {
      if (!warp && t->syncTwice) {
        t->syncTwice = false;
        ++again;
      } else {
        addRunnable(t);
      }
      if (race)
        syncMembers.push_back(t->raceId);
    }
  }
  // A block or warp sync orders every member's past before every member's
  // future (bar.sync, bar.warp.sync).
  if (race)
    race->syncGroup(syncMembers);
  (warp ? b->warpArrived[warpIndex] : b->syncArrived) = again;
  // Every live thread took both syncs: the second releases too.
  if (again > 0 && again == b->live)
    releaseSync(b, false, 0);
}

void Scheduler::finishThread(EmuThread *t) {
  removeRunnable(t);
  t->state = ThreadState::Done;
  --liveThreads;
  Block *b = t->block;
  uint32_t w = t->tid / kWarpSize;
  --b->live;
  --b->warpLive[w];
  if (b->live == 0) {
    // The block retires and frees its residency slot for the next block.
    RankState &rank = *b->rank;
    uint32_t pos = b->pos;
    std::swap(rank.active[pos], rank.active.back());
    rank.active[pos]->pos = pos;
    rank.active.pop_back();
    if (rank.nextBlock < blocksPerRank(config))
      startBlock(rank);
    return;
  }
  // An exited thread no longer takes part in syncs (as on current GPUs).
  if (b->syncArrived > 0 && b->syncArrived == b->live)
    releaseSync(b, false, 0);
  if (b->warpArrived[w] > 0 && b->warpArrived[w] == b->warpLive[w])
    releaseSync(b, true, w);
}

void Scheduler::afterYield(EmuThread *t, Yield before,
                           const WaitInfo &beforeWait) {
  switch (t->reason) {
  case Yield::BlockSync: {
    Block *b = t->block;
    removeRunnable(t);
    t->state = ThreadState::InSync;
    if (++b->syncArrived == b->live)
      releaseSync(b, false, 0);
    progress();
    break;
  }
  case Yield::WarpSync: {
    Block *b = t->block;
    uint32_t w = t->tid / kWarpSize;
    removeRunnable(t);
    t->state = ThreadState::InSync;
    if (++b->warpArrived[w] == b->warpLive[w])
      releaseSync(b, true, w);
    progress();
    break;
  }
  case Yield::Spin:
    // A re-poll that spins again on the same wait changed nothing; anything
    // else (the first poll after other work) may have stored to memory. Two
    // waits in a row can look the same (a signal wait for 1 on a word the
    // thread reset, after it signalled another rank): the stores between
    // them tell them apart.
    if (!(before == Yield::Spin && sameWait(beforeWait, t->wait) &&
          !t->storedSinceYield))
      progress();
    // Its poll saw the current generation: polling again before the next
    // progress cannot succeed.
    t->lastSpinGen = generation;
    if (t->wait.watch)
      watch(t);
    else
      park(t);
    break;
  case Yield::Hint:
    // Only the first poll after other work may follow a store; what a
    // thread stores between two hints is invisible here, so a hint never
    // counts as progress otherwise (which is what lets a livelock of polls
    // reach the deadline instead of spinning forever).
    if (before != Yield::Hint)
      progress();
    t->lastSpinGen = generation;
    park(t);
    break;
  case Yield::Abort:
  case Yield::NotStarted:
    break;
  }
}

void Scheduler::beginStep(EmuThread *t) {
  // Only a spin is compared with the wait before it (afterYield); a member,
  // copied only then: a local WaitInfo was initialised on every step.
  stepBefore = t->reason;
  if (stepBefore == Yield::Spin)
    beforeWait = t->wait;
  t->storedSinceYield = false;
  ++steps;
  // One mix of the three coordinates (each below 2^21 in a launch the
  // checker allows; a wider one only folds more into the hash).
  hash = mix64(hash ^ (static_cast<uint64_t>(t->block->rank->index) << 42 ^
                       static_cast<uint64_t>(t->block->id) << 21 ^ t->tid));
  heartbeat.rank.store(t->block->rank->info.rank, std::memory_order_relaxed);
  heartbeat.block.store(t->block->id, std::memory_order_relaxed);
  heartbeat.thread.store(t->tid, std::memory_order_relaxed);
  heartbeat.step.store(steps, std::memory_order_release);
  heartbeat.inFiber.store(true, std::memory_order_release);
  running = t;
}

EmuThread *Scheduler::drawStep() {
  EmuThread *t = runnable[rng.below(runnable.size())];
  beginStep(t);
  return t;
}

void Scheduler::adopt(FiberContext from, FiberBounds stack) {
  if (switchedFrom) {
    switchedFrom->context = from;
  } else {
    mainCtx = from;
    mainStack = stack;
  }
}

void Scheduler::yieldToScheduler(Yield why) {
  EmuThread *t = running;
  t->reason = why;
  // The end of this step and, when the loop would go straight on to the
  // next (no message due, a thread runnable, the launch not ending), the
  // next step's start, here on the yielding fiber: it then resumes the
  // next thread itself, one switch instead of two through the scheduler
  // (or none when the draw picks it again). The same draws in the same
  // order as loop(), so the schedule is the one a seed always gave.
  if (!stepError) {
    try {
      afterYield(t, stepBefore, beforeWait);
    } catch (...) {
      // Thrown back on the scheduler's stack, not through kernel frames.
      stepError = std::current_exception();
    }
  }
  // loop()'s conditions for going straight on to stepOne().
  if (!stepError && liveThreads > 0 && !stop && inFlight.empty() &&
      !runnable.empty()) {
    EmuThread *next = drawStep();
    if (next == t)
      return;
    switchedFrom = t;
    asanLeave(&t->asan, boundsOf(next->stack));
    FiberContext from =
        switchFiber(std::exchange(next->context, nullptr), nullptr).fctx;
    adopt(from, asanArrive(t->asan));
    return;
  }
  // Whoever resumes this fiber later says where it came from.
  asanLeave(&t->asan, mainStack);
  FiberContext from =
      switchFiber(std::exchange(mainCtx, nullptr), nullptr).fctx;
  adopt(from, asanArrive(t->asan));
}

RunResult Scheduler::run() {
  prepareFatalHandling();
  {
    CurrentScope scope(this);
    OpTallyScope tally;
    Watchdog watchdog(heartbeat, config.timeoutNs, config.seed,
                      config.replayWith.c_str());
    try {
      loop();
    } catch (...) {
      // Out of memory or stack mappings while starting a block: nothing
      // was resumed since, so the threads can be abandoned like a failure's.
      teardown();
      throw;
    }
  }
  RunResult result = failure;
  if (result.outcome != Outcome::Completed)
    result.rankStates = rankStates();
  result.steps = steps;
  result.scheduleHash = hash;
  teardown();
  return result;
}

void Scheduler::setUp() {
  ranks.resize(config.ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].info = config.ranks[i];
    ranks[i].index = static_cast<int>(i);
  }
  if (config.raceCheck)
    // One more thread per rank: its network (nics), after every block's.
    race = std::make_shared<RaceChecker>(
        ranks.size() * blocksPerRank(config) * threadsPerBlock(config) +
            ranks.size(),
        config.regions, threadsPerBlock(config));
  netPending.assign(ranks.size(), 0);
  nics.assign(ranks.size(), 0);
  if (race)
    for (size_t i = 0; i < ranks.size(); ++i)
      nics[i] = race->addLoneThread({ranks[i].info.rank, ~0u, ~0u});
  CheckContext context;
  context.race = race;
  for (const RankInfo &r : config.ranks)
    context.comms.insert(r.devComm);
  for (std::shared_ptr<Check> &check : makeChecks(context)) {
    if (check->events() & kCheckAccesses)
      accessChecks.push_back(check);
    if (check->events() & kCheckBarrierEvents)
      barrierChecks.push_back(check);
  }
  if (accessChecks.size() == 1 && accessChecks[0] == race)
    onlyRace = race.get();
  for (const RankInfo &r : config.ranks) {
    const auto *dc = static_cast<const DevComm *>(r.devComm);
    if (dc && dc->magic == kDevCommMagic && dc->version == kDevCommVersion &&
        dc->nNodes > 1)
      ranksPerNode = dc->size;
  }
  if (race)
    race->setRanksPerNode(ranksPerNode);
  uint64_t resident =
      std::min<uint64_t>(config.maxResident, blocksPerRank(config));
  for (RankState &rank : ranks)
    for (uint64_t i = 0; i < resident; ++i)
      startBlock(rank);
}

bool Scheduler::whenIdle() {
  bool remote =
      config.partial && (parked.size() > parkedHints || !watching.empty());
  if (parkedHints > 0 || remote) {
    // Hinting threads may be waiting for each other's stores, which the
    // scheduler cannot see, and in a partial launch a peer elsewhere
    // may write what a spinner waits for: run them again (after a pause
    // for the peer); the deadline ends polls that never succeed, and
    // the device library's timeout ends barrier waits.
    if (parkedHints > 0 && pastDeadline()) {
      resolveWaits();
      failure.outcome = Outcome::NoProgress;
      failure.message = deadlockReport(
          failure, "no progress for " +
                       std::to_string(config.timeoutNs / 1000000) +
                       " ms: all " + std::to_string(liveThreads) +
                       " live threads only poll memory or wait");
      return false;
    }
    if (remote) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      unparkAll();
    } else {
      unparkHints();
    }
    return true;
  }
  resolveWaits();
  failure.outcome = Outcome::Deadlock;
  failure.message =
      deadlockReport(failure, "deadlock: all " + std::to_string(liveThreads) +
                                  " live threads are blocked");
  return false;
}

// Inlined into loop(): the one call of every step (a call of its own cost
// 2% of a launch's instructions).
[[gnu::always_inline]] inline void Scheduler::stepOne() {
  EmuThread *t = drawStep();
  switchedFrom = nullptr;
  asanLeave(&mainAsan, boundsOf(t->stack));
  FiberTransfer back = switchFiber(std::exchange(t->context, nullptr), nullptr);
  asanArrive(mainAsan);
  // Back from the thread whose step ended last (fibers may have resumed
  // each other since, yieldToScheduler): its context, or its exit, after
  // which its stack (left for good) serves the pool's next thread.
  EmuThread *last = running;
  running = nullptr;
  heartbeat.inFiber.store(false, std::memory_order_release);
  bool exited = back.data == &exitedWord;
  if (exited)
    stacks.deallocate(last->stack);
  else
    last->context = back.fctx;
  if (stepError)
    std::rethrow_exception(std::exchange(stepError, nullptr));
  if (exited) {
    finishThread(last);
    progress();
  }
}

void Scheduler::loop() {
  setUp();
  while (liveThreads > 0 && !stop) {
    if (!inFlight.empty())
      deliverDue();
    if (runnable.empty() && !unparkStale()) {
      if (!inFlight.empty()) {
        // Every thread waits, and a message is on its way: nothing happens
        // until it lands, so the clock skips to it (not a deadlock).
        netSkipped += inFlight.front().due - netNow();
        deliverDue();
        continue;
      }
      if (!whenIdle())
        break;
      continue;
    }
    stepOne();
  }
  // Messages still in flight when every thread has exited land, as a
  // network delivers what was sent whether or not the sender still runs:
  // the clock skips to each one's delivery. A later launch (a wait on an
  // arrive of this one) sees them; a failed launch drops them.
  if (liveThreads == 0 && !stop)
    while (!inFlight.empty()) {
      netSkipped +=
          inFlight.front().due - std::min(inFlight.front().due, netNow());
      deliverDue();
    }
}

namespace {
/// The heap order of messages in flight: the earliest due on top.
bool laterMessage(const NetMessage &a, const NetMessage &b) {
  return a.due != b.due ? a.due > b.due : a.seq > b.seq;
}
} // namespace

namespace {
/// Whether `word` is one of the signal words of the emulator's network
/// that `comm` reaches (else a barrier's net word).
bool netSignalWord(const void *comm, const uint64_t *word) {
  const auto *dc = static_cast<const DevComm *>(comm);
  if (!dc || dc->netKind != kNetEmu || !dc->net)
    return false;
  const auto *net = static_cast<const EmuNet *>(dc->net);
  for (uint32_t p = 0; p < net->worldSize && p < uint32_t(kMaxRanks); ++p)
    if (net->signals[p] && word >= net->signals[p] &&
        word < net->signals[p] + net->nSignalWords)
      return true;
  return false;
}
} // namespace

void Scheduler::netAdd(const void *comm, uint64_t *word, uint64_t value) {
  EmuThread *t = running;
  NetMessage m;
  m.due = netNow() + config.netLatencySteps;
  m.seq = netSeq++;
  m.word = word;
  m.value = value;
  m.signal = race && netSignalWord(comm, word);
  m.sender = t->block->rank->info.rank;
  if (race)
    m.release = race->sendRelease(t->raceId);
  // A spin after the send is a new wait, as after a store.
  t->storedSinceYield = true;
  inFlight.push_back(std::move(m));
  std::push_heap(inFlight.begin(), inFlight.end(), laterMessage);
}

void Scheduler::netCopy(void *dst, const void *src, uint64_t bytes,
                        uint64_t *signal, uint64_t signalValue,
                        uint64_t *counter, uint64_t counterValue,
                        const uint64_t *carried) {
  EmuThread *t = running;
  NetMessage m;
  m.due = netNow() + config.netLatencySteps;
  m.seq = netSeq++;
  m.word = signal;
  m.value = signalValue;
  m.sender = t->block->rank->info.rank;
  m.senderIndex = t->block->rank->index;
  if (race)
    m.release = race->sendRelease(t->raceId);
  m.transfer = true;
  m.signal = true;
  m.dst = dst;
  m.src = src;
  m.bytes = bytes;
  if (carried) {
    m.carried = true;
    m.inlineValue = *carried;
  }
  m.counter = counter;
  m.counterValue = counterValue;
  ++netPending[m.senderIndex];
  t->storedSinceYield = true;
  inFlight.push_back(std::move(m));
  std::push_heap(inFlight.begin(), inFlight.end(), laterMessage);
}

uint64_t Scheduler::netFlush() {
  EmuThread *t = running;
  int index = t->block->rank->index;
  if (netPending[index] == 0 && race)
    race->acquireFrom(t->raceId, race->now(nics[index]));
  return netPending[index];
}

/// Lands transfer `m`: the network reads the source and writes the
/// destination (checked as its accesses, ordered after the send), then
/// adds to the completion words as releases.
void Scheduler::landTransfer(NetMessage &m) {
  uint32_t nic = nics[m.senderIndex];
  if (race)
    race->acquireFrom(nic, m.release);
  std::optional<std::string> report;
  const Check *who = nullptr;
  if (!m.carried && m.bytes)
    report = checkAccess(
        {nic, m.src, m.bytes, kAccessLoad, kOrderRelaxed, nullptr}, who);
  if (!report && m.bytes)
    report = checkAccess(
        {nic, m.dst, m.bytes, kAccessStore, kOrderRelaxed, nullptr}, who);
  if (report && !stop) {
    stop = true;
    failure.outcome = Outcome::CheckFailed;
    failure.checkResult = who->result();
    failure.message = std::move(*report);
    failure.rankIndex = m.senderIndex;
  }
  if (m.carried)
    memcpy(m.dst, &m.inlineValue, m.bytes);
  else if (m.bytes)
    memcpy(m.dst, m.src, m.bytes);
  if (m.counter) {
    uint64_t before =
        __atomic_fetch_add(m.counter, m.counterValue, __ATOMIC_RELEASE);
    if (race)
      race->deliverAdd(m.counter, before, m.counterValue,
                       race->sendRelease(nic));
    wake(m.counter);
  }
  if (race)
    m.release = race->sendRelease(nic);
  --netPending[m.senderIndex];
}

bool Scheduler::deliverDue() {
  bool any = false;
  while (!inFlight.empty() && inFlight.front().due <= netNow()) {
    std::pop_heap(inFlight.begin(), inFlight.end(), laterMessage);
    NetMessage m = std::move(inFlight.back());
    inFlight.pop_back();
    if (m.transfer) {
      landTransfer(m);
      if (!m.word) {
        any = true;
        progress();
        continue;
      }
    }
    uint64_t before = __atomic_fetch_add(m.word, m.value, __ATOMIC_RELEASE);
    wake(m.word);
    // A signal word's add joins its history, so that a wait across nodes
    // acquires up to its target as one on this node does; a barrier's net
    // word continues its release sequence.
    if (race && m.signal)
      race->deliverAdd(m.word, before, m.value, m.release);
    else if (race)
      race->deliver(m.word, m.release);
    netDelivered[{m.word, m.sender}] += m.value;
    any = true;
    // Memory changed: a waiter on the word may now pass.
    progress();
  }
  return any;
}

std::string Scheduler::rankName(int32_t worldRank) const {
  std::string out = "rank " + std::to_string(worldRank);
  if (ranksPerNode > 0)
    out += " (node " + std::to_string(worldRank / ranksPerNode) + ", local " +
           std::to_string(worldRank % ranksPerNode) + ")";
  return out;
}

PeerMask Scheduler::netMissing(const WaitInfo &wait) const {
  PeerMask out = {};
  const auto *dc = static_cast<const DevComm *>(wait.comm);
  if (!dc || dc->netKind != kNetEmu || !dc->net)
    return wait.missing;
  const auto *net = static_cast<const EmuNet *>(dc->net);
  int32_t me = wait.rank;
  const uint64_t *word =
      wait.netWord < net->nSignalWords
          ? net->signals[me] + wait.netWord
          : net->barrier[me] + (wait.netWord - net->nSignalWords);
  for (int32_t q = 0; q < kMaxRanks; ++q) {
    if (!(wait.missing.words[q / 64] >> (q % 64) & 1))
      continue;
    auto it = netDelivered.find({word, q});
    if (it == netDelivered.end() || it->second < wait.epoch)
      out.words[q / 64] |= uint64_t(1) << (q % 64);
  }
  return out;
}

void Scheduler::teardown() {
  // Threads still suspended belong to a failed launch. Their stacks are
  // abandoned, not unwound; the pool unmaps them with the launch.
  ranks.clear();
  runnable.clear();
  parked.clear();
  watching.clear();
  watchers.clear();
}

void Scheduler::spinWait(const WaitInfo *info) {
  EmuThread *t = running;
  if (info) {
    t->wait = *info;
  } else {
    t->wait = WaitInfo{};
    t->wait.rank = t->block->rank->info.rank;
    t->wait.what = "spin wait";
  }
  yieldToScheduler(Yield::Spin);
}

void Scheduler::spinHint(const void *addr, uint64_t value) {
  EmuThread *t = running;
  t->hintAddr = addr;
  t->hintValue = value;
  t->hintSite = t->accessSite;
  t->accessSite = nullptr;
  yieldToScheduler(Yield::Hint);
}

void Scheduler::abortLaunch() {
  EmuThread *t = running;
  if (!stop) {
    stop = true;
    failure.outcome = Outcome::Aborted;
    failure.rankIndex = t->block->rank->index;
    failure.block = static_cast<int32_t>(t->block->id);
    failure.thread = static_cast<int32_t>(t->tid);
    failure.site = t->site;
  }
  // Never resumed: the launch ends and teardown abandons this fiber.
  for (;;)
    yieldToScheduler(Yield::Abort);
}

void Scheduler::internalError(std::string message) {
  failLaunch(Outcome::Internal, std::move(message));
}

void Scheduler::failCheck(const Check &check, std::string report) {
  if (!stop)
    failure.checkResult = check.result();
  failLaunch(Outcome::CheckFailed, std::move(report));
}

void Scheduler::failLaunch(Outcome outcome, std::string message) {
  EmuThread *t = running;
  if (!stop) {
    stop = true;
    failure.outcome = outcome;
    failure.message = std::move(message);
    failure.rankIndex = t->block->rank->index;
    failure.block = static_cast<int32_t>(t->block->id);
    failure.thread = static_cast<int32_t>(t->tid);
    failure.site = t->site;
  }
  for (;;)
    yieldToScheduler(Yield::Abort);
}

void Scheduler::describeFault(SafeText &out, int sig,
                              const void *addr) const noexcept {
  const EmuThread *t = running;
  bool overflow = (sig == SIGSEGV || sig == SIGBUS) && stacks.inGuard(addr);
  out.add("tle emulator: ");
  if (overflow)
    out.add("stack overflow");
  else if (sig == SIGSEGV)
    out.add("segmentation fault (SIGSEGV)");
  else if (sig == SIGBUS)
    out.add("bus error (SIGBUS)");
  else if (sig == SIGILL)
    out.add("illegal instruction or trap (SIGILL)");
  else
    out.add("arithmetic fault (SIGFPE)");
  out.add(" in rank ")
      .addSigned(t->block->rank->info.rank)
      .add(" block ")
      .add(uint64_t(t->block->id))
      .add(" thread ")
      .add(uint64_t(t->tid));
  if (overflow)
    out.add(": the thread used more than its ")
        .add(uint64_t(config.stackBytes))
        .add("-byte stack (raise LaunchOptions::stackBytes, tlerun "
             "--stack-bytes)");
  else
    out.add(" at address ").addHex(reinterpret_cast<uintptr_t>(addr));
  out.add("; replay with ")
      .add(config.replayWith.c_str())
      .add(config.seed)
      .add("\ntle emulator: a faulting thread cannot be resumed: the process "
           "ends\n");
}

uint32_t *Scheduler::blockScratch(uint32_t id, uint32_t n) {
  Block *b = running->block;
  auto [it, inserted] = b->scratch.try_emplace(id);
  if (inserted)
    it->second.assign(std::max<uint32_t>(n, 1), 0);
  else if (it->second.size() < n)
    internalError("tleEmuBlockScratch(" + std::to_string(id) + ", " +
                  std::to_string(n) + "): the block's scratch " +
                  std::to_string(id) + " already has " +
                  std::to_string(it->second.size()) + " words");
  return it->second.data();
}

namespace {
/// "file:line" of a typed API call, kept for the process: reports and
/// traces (lastTraceJson) name it after the launch, and the report's
/// grouping compares sites by pointer, so one text has one copy. Several
/// OS threads may run launches, hence the lock; the tables are never
/// destroyed, so that a launch running at exit still finds them.
const char *internSite(const char *file, uint32_t line) {
  static auto *mutex = new std::mutex;
  static auto *bySource =
      new std::map<std::pair<const char *, uint32_t>, const char *>;
  static auto *texts = new std::set<std::string>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto [it, fresh] = bySource->try_emplace({file, line}, nullptr);
  if (fresh)
    it->second = texts->insert(std::string(file) + ":" + std::to_string(line))
                     .first->c_str();
  return it->second;
}
} // namespace

void Scheduler::enterOutermost(EmuThread *t, const char *name, const char *file,
                               uint32_t line) {
  t->call = name ? name : "";
  // A compiled kernel's op location (tleEmuSite) is the better name.
  if (file && !t->site) {
    t->site = internSite(file, line);
    t->callSetSite = true;
  }
}

void Scheduler::barrierEvent(const void *comm, int kind, int coop,
                             uint32_t slot, int order, int phase) {
  EmuThread *t = running;
  int32_t rank = t->block->rank->info.rank;
  bool signal = kind == kTraceSignal || kind == kTraceSignalWait;
  const auto *dc = static_cast<const DevComm *>(comm);
  bool checked =
      dc && dc->magic == kDevCommMagic && dc->version == kDevCommVersion;
  if (config.trace) {
    TeamSlot ts = signal || !checked ? TeamSlot{kTeamIntra, slot}
                                     : splitTeamSlot(slot, dc->nBarriers);
    trace.push_back({rank, t->block->id, t->tid, t->block->size, steps, kind,
                     coop, order, phase, ts.slot, t->site, ts.team});
  }
  // A signal's events are the trace's only. The slot checks need a
  // communicator (the device library passes one it checked; a test may pass
  // none).
  if (signal || !checked)
    return;
  SlotEvent e;
  e.comm = comm;
  e.rank = rank;
  e.block = t->block->id;
  e.thread = t->tid;
  e.kind = kind;
  e.coop = coop;
  e.slot = slot;
  e.phase = phase;
  e.site = t->site;
  e.raceId = t->raceId;
  for (const std::shared_ptr<Check> &check : barrierChecks)
    if (std::optional<std::string> report = check->onBarrierEvent(e))
      failCheck(*check, std::move(*report));
}

std::optional<std::string> Scheduler::checkAccess(const AccessEvent &e,
                                                  const Check *&who) {
  for (const std::shared_ptr<Check> &check : accessChecks)
    if (std::optional<std::string> report = check->onAccess(e)) {
      who = check.get();
      return report;
    }
  return std::nullopt;
}

void Scheduler::accessAll(const void *addr, uint64_t bytes, int kind, int order,
                          const char *where) {
  const Check *who = nullptr;
  if (std::optional<std::string> report =
          checkAccess({running->raceId, addr, bytes, kind, order, where}, who))
    failCheck(*who, std::move(*report));
}

void Scheduler::signal(const void *word, int event, uint64_t value,
                       uint64_t operand, int order) {
  if (!race)
    return;
  uint32_t tid = running->raceId;
  const char *where = running->site;
  std::optional<std::string> report;
  switch (event) {
  case kSignalAdd:
    report = race->signalAdd(tid, word, value, operand, order, where);
    break;
  case kSignalWait:
    report = race->signalWait(tid, word, value, order, where);
    break;
  case kSignalRead:
    report = race->signalRead(tid, word, value, order, where);
    break;
  case kSignalStore:
    report = race->signalStore(tid, word, value, where);
    break;
  default:
    internalError("tleEmuSignal: unknown event " + std::to_string(event));
  }
  if (report)
    failCheck(*race, std::move(*report));
}

std::string Scheduler::describeAddress(const void *addr) const {
  return race ? race->describe(addr) : std::string();
}

std::string Scheduler::rankStates() const {
  std::vector<int32_t> exited, running;
  uint64_t total = blocksPerRank(config);
  for (const RankState &rank : ranks)
    (rank.active.empty() && rank.nextBlock >= total ? exited : running)
        .push_back(rank.info.rank);
  if (exited.empty())
    return "";
  auto list = [](const std::vector<int32_t> &v) {
    std::string out = v.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
  };
  std::string out = list(exited) + (exited.size() == 1 ? " has" : " have") +
                    " exited (every thread returned)";
  if (!running.empty())
    out += "; " + list(running) + (running.size() == 1 ? " is" : " are") +
           " still running";
  return out;
}

} // namespace tle::emu::detail
