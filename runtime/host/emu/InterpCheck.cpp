//===- InterpCheck.cpp - Race and slot checks of Triton's interpreter -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements InterpCheck.h: the recorder each rank runs (the file of
// events, the shared ticket counter and lock, addresses as offsets of
// shared files) and the replay the launcher runs over every rank's file.
//
//===----------------------------------------------------------------------===//

#include "emu/InterpCheck.h"

#include "emu/OffFiber.h"
#include "emu/Race.h"
#include "emu/Slots.h"
#include "tle/abi.h"
#include "tle/detail/DevComm.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <set>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace tle::emu::detail {
bool interpChecking = false;
} // namespace tle::emu::detail

using namespace tle;
using namespace tle::emu::detail;

namespace {

enum RecType : uint32_t {
  kRecAccess = 1, ///< key/off, bytes, kind, order
  kRecBarrier,    ///< key = communicator, off = slot; kind, coop, order, phase
  kRecRelease,    ///< key/off: the word a signal adds to
  kRecAcquire,    ///< key/off: a word loaded with acquire
  kRecComm,       ///< key = communicator; kind rank, coop size, order
                  ///< nBarriers, phase node, aux nNodes
  kRecSite,       ///< site = id; bytes of text follow
  kRecName,       ///< key/off, size in `off2`; bytes of text follow
};

/// One event, as written.
struct Rec {
  uint64_t ticket = 0;
  uint32_t type = 0, launch = 0;
  uint32_t program = 0, site = 0;
  uint64_t key = 0, off = 0, off2 = 0;
  uint32_t bytes = 0;
  int32_t kind = 0, order = 0, coop = 0, phase = 0, aux = 0;
};

/// The page every rank maps: the ticket counter and the atomics' lock.
struct SharedPage {
  uint64_t ticket;
  uint32_t lock;
};

bool releases(int order) {
  return order == kOrderRelease || order == kOrderAcqRel ||
         order == kOrderSeqCst;
}
bool acquiresOrder(int order) {
  return order == kOrderAcquire || order == kOrderAcqRel ||
         order == kOrderSeqCst;
}
bool isBarrierKind(int kind) {
  return kind == kBarrierArrive || kind == kBarrierWait || kind == kBarrierSync;
}

//===-- The recorder ------------------------------------------------------===//

struct Mapping {
  uint64_t start, end, fileOff, key;
};

struct Recorder {
  FILE *out = nullptr;
  SharedPage *page = nullptr;
  int32_t rank = 0;
  uint32_t launch = 0, program = 0, site = 0;
  std::unordered_map<std::string, uint32_t> sites;
  std::unordered_map<const void *, uint32_t> comms;
  std::vector<Mapping> maps;
  bool mapsStale = true;
  bool pendingAcquire = false;
  Rec acquire;
  /// Inside a signal's add: the ticket taken at its begin.
  bool inSignal = false;
  uint64_t signalTicket = 0;
  /// Inside a barrier's wait or sync: its atomics are the barrier's.
  bool inBarrier = false;

  uint64_t ticket() {
    return __atomic_fetch_add(&page->ticket, 1, __ATOMIC_SEQ_CST);
  }
  void emitPending() {
    if (pendingAcquire) {
      pendingAcquire = false;
      std::fwrite(&acquire, sizeof acquire, 1, out);
    }
  }
  void put(const Rec &r, const char *text = nullptr, uint64_t len = 0) {
    emitPending();
    std::fwrite(&r, sizeof r, 1, out);
    if (text) {
      std::fwrite(text, 1, len, out);
      static const char pad[8] = {};
      std::fwrite(pad, 1, (8 - len % 8) % 8, out);
    }
  }
  void flush() {
    emitPending();
    std::fflush(out);
  }
  uint32_t currentProgramId() const {
    if (const OffFiberProgram *p = currentProgram)
      return p->blockIdx[0] +
             p->gridDim[0] * (p->blockIdx[1] + p->gridDim[1] * p->blockIdx[2]);
    return program;
  }
  Rec make(uint32_t type) const {
    Rec r;
    r.type = type;
    r.launch = launch;
    r.program = currentProgramId();
    r.site = site;
    return r;
  }
  void loadMaps() {
    mapsStale = false;
    maps.clear();
    FILE *f = std::fopen("/proc/self/maps", "r");
    if (!f)
      return;
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long start, end, off, inode;
      unsigned major, minor;
      char perms[8];
      if (std::sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end,
                      perms, &off, &major, &minor, &inode) != 7)
        continue;
      if (perms[3] != 's' || inode == 0)
        continue;
      uint64_t dev = (uint64_t(major) << 20) | minor;
      maps.push_back({start, end, off, (dev << 40) ^ inode});
    }
    std::fclose(f);
    std::sort(maps.begin(), maps.end(), [](const Mapping &a, const Mapping &b) {
      return a.start < b.start;
    });
  }
  const Mapping *find(uint64_t addr) {
    if (mapsStale)
      loadMaps();
    auto it = std::upper_bound(
        maps.begin(), maps.end(), addr,
        [](uint64_t a, const Mapping &m) { return a < m.start; });
    if (it == maps.begin())
      return nullptr;
    --it;
    return addr < it->end ? &*it : nullptr;
  }
  uint32_t commId(const void *comm) {
    auto [it, fresh] = comms.try_emplace(comm, uint32_t(comms.size()));
    if (fresh) {
      const auto *dc = static_cast<const DevComm *>(comm);
      Rec r = make(kRecComm);
      r.key = it->second;
      r.kind = dc->rank;
      r.coop = dc->size;
      r.order = static_cast<int32_t>(dc->nBarriers);
      r.phase = dc->node;
      r.aux = dc->nNodes;
      put(r);
    }
    return it->second;
  }
};

Recorder *rec = nullptr;

} // namespace

namespace tle::emu::detail {

void interpCheckHookAccess(const void *addr, uint64_t bytes, int kind,
                           int order) {
  if (!rec || !rec->launch || rec->inBarrier || !addr)
    return;
  const Mapping *m = rec->find(reinterpret_cast<uint64_t>(addr));
  if (!m)
    return;
  Rec r = rec->make(kRecAccess);
  r.key = m->key;
  r.off = reinterpret_cast<uint64_t>(addr) - m->start + m->fileOff;
  r.bytes = static_cast<uint32_t>(bytes);
  if (kind == kAccessLoad || kind == kAccessStore) {
    r.ticket = rec->ticket();
    r.kind = kind;
    rec->put(r);
    return;
  }
  if (rec->inSignal &&
      (kind == kAccessAtomicUpdate || kind == kAccessAtomicStore)) {
    r.type = kRecRelease;
    r.ticket = rec->signalTicket;
    rec->put(r);
    return;
  }
  if ((kind == kAccessAtomicLoad || kind == kAccessAtomicUpdate) &&
      acquiresOrder(order)) {
    // A poll repeats its load: only the last one counts, which is the one
    // that saw what it waited for.
    r.type = kRecAcquire;
    r.ticket = rec->ticket();
    if (rec->pendingAcquire &&
        (rec->acquire.key != r.key || rec->acquire.off != r.off ||
         rec->acquire.program != r.program))
      rec->emitPending();
    rec->acquire = r;
    rec->pendingAcquire = true;
  }
}

void interpCheckHookSignal(const void *word, int event, int order) {
  if (!interpChecking)
    return;
  if (event == kSignalAdd)
    interpCheckHookAccess(word, sizeof(uint64_t), kAccessAtomicUpdate, order);
  else if (event == kSignalStore)
    interpCheckHookAccess(word, sizeof(uint64_t), kAccessAtomicStore, order);
}

void interpCheckHookEvent(const void *comm, int kind, int coop, uint32_t slot,
                          int order, int phase) {
  if (!rec || !rec->launch || !comm)
    return;
  if (kind == kTraceSignal) {
    rec->inSignal = phase == kTraceBegin;
    if (rec->inSignal)
      rec->signalTicket = rec->ticket();
    return;
  }
  if (!isBarrierKind(kind))
    return;
  rec->inBarrier = phase == kTraceBegin && kind != kBarrierArrive;
  Rec r = rec->make(kRecBarrier);
  r.key = rec->commId(comm);
  r.off = slot;
  r.kind = kind;
  r.coop = coop;
  r.order = order;
  r.phase = phase;
  r.ticket = rec->ticket();
  rec->put(r);
}

} // namespace tle::emu::detail

//===-- The replay --------------------------------------------------------===//

namespace {

/// One rank's file, read.
struct RankLog {
  std::map<uint32_t, std::string> sites;
  std::vector<Rec> events;
};

/// A symmetric buffer's copy as named by the rank that owns it.
struct Named {
  uint64_t key, off, bytes;
  std::string name;
  int32_t rank;
};

bool readLog(const std::string &path, int32_t rank, RankLog &log,
             std::vector<Named> &names, std::string &why) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    why = path + ": " + std::strerror(errno);
    return false;
  }
  Rec r;
  std::string text;
  while (std::fread(&r, sizeof r, 1, f) == 1) {
    if (r.type == kRecSite || r.type == kRecName) {
      uint64_t padded = (r.bytes + 7) / 8 * 8;
      text.assign(padded, '\0');
      if (std::fread(text.data(), 1, padded, f) != padded)
        break;
      text.resize(r.bytes);
      if (r.type == kRecSite)
        log.sites[r.site] = text;
      else
        names.push_back({r.key, r.off, r.off2, text, rank});
      continue;
    }
    log.events.push_back(r);
  }
  std::fclose(f);
  return true;
}

/// One launch's replay: every rank's events of the launch in ticket order.
struct Replay {
  struct Event {
    int32_t rank;
    const Rec *rec;
  };
  const std::vector<RankLog> &logs;
  const std::map<uint64_t, uint64_t> &bases;
  std::vector<RaceRegion> regions;
  /// DevComm stand-ins, by (rank, communicator), for the slot checker.
  std::map<std::pair<int32_t, uint64_t>, DevComm> &comms;

  const char *siteOf(int32_t rank, uint32_t id) const {
    auto it = logs[rank].sites.find(id);
    return it == logs[rank].sites.end() ? nullptr : it->second.c_str();
  }
  const void *fake(uint64_t key, uint64_t off) const {
    auto it = bases.find(key);
    return reinterpret_cast<const void *>(it->second + off);
  }

  void run(std::vector<Event> &events, std::vector<std::string> &reports) {
    // A signal's release shares its begin's ticket with nothing of another
    // rank; ties keep each rank's file order.
    std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
      return std::tie(a.rec->ticket, a.rank, a.rec) <
             std::tie(b.rec->ticket, b.rank, b.rec);
    });
    std::set<std::pair<int32_t, uint32_t>> threads;
    for (const Event &e : events)
      threads.insert({e.rank, e.rec->program});
    RaceChecker race(threads.size(), regions);
    std::set<const void *> launchComms;
    for (auto &[id, dc] : comms)
      if (id.second == 0)
        launchComms.insert(&dc);
    SlotChecker slots(&race, launchComms);
    std::map<std::pair<int32_t, uint32_t>, uint32_t> tids;
    std::map<std::pair<uint64_t, uint64_t>, std::vector<Snap>> words;
    // A slot's rounds: by (rank, communicator, slot) the arrivals so far;
    // by (communicator, team, slot, round) what the round's ranks released.
    std::map<std::tuple<int32_t, uint64_t, uint64_t>, uint32_t> arrivals;
    std::map<std::tuple<uint64_t, int64_t, uint64_t, uint32_t>,
             std::vector<Snap>>
        rounds;
    bool raced = false, misused = false;
    for (const Event &e : events) {
      const Rec &r = *e.rec;
      auto [it, fresh] = tids.try_emplace({e.rank, r.program}, 0);
      if (fresh)
        it->second = race.addThread({e.rank, r.program, 0});
      uint32_t tid = it->second;
      const char *site = siteOf(e.rank, r.site);
      if (r.type == kRecAccess) {
        if (bases.count(r.key) == 0)
          continue;
        auto report = race.access(tid, fake(r.key, r.off), r.bytes, r.kind,
                                  r.order, site);
        if (report && !raced) {
          raced = true;
          reports.push_back(*report);
        }
      } else if (r.type == kRecRelease) {
        words[{r.key, r.off}].push_back(race.sendRelease(tid));
      } else if (r.type == kRecAcquire) {
        auto w = words.find({r.key, r.off});
        if (w != words.end())
          for (const Snap &s : w->second)
            race.acquireFrom(tid, s);
      } else if (r.type == kRecBarrier) {
        DevComm &dc = comms[{e.rank, r.key}];
        uint32_t slot = static_cast<uint32_t>(r.off);
        int64_t team = teamOfSlot(dc, slot);
        auto arrival = std::make_tuple(e.rank, r.key, r.off);
        bool enters = r.kind == kBarrierArrive ||
                      (r.kind == kBarrierSync && r.phase == kTraceBegin);
        bool leaves = r.kind != kBarrierArrive && r.phase == kTraceEnd;
        if (enters) {
          uint32_t round = ++arrivals[arrival];
          if (releases(r.order))
            rounds[{r.key, team, r.off, round}].push_back(
                race.sendRelease(tid));
        }
        if (leaves && acquiresOrder(r.order)) {
          auto found = rounds.find({r.key, team, r.off, arrivals[arrival]});
          if (found != rounds.end())
            for (const Snap &s : found->second)
              race.acquireFrom(tid, s);
        }
        SlotEvent se;
        se.comm = &dc;
        se.rank = dc.nNodes > 1 ? dc.node * dc.size + dc.rank : dc.rank;
        se.block = r.program;
        se.kind = r.kind;
        se.coop = r.coop;
        se.slot = slot;
        se.phase = r.phase;
        se.site = site;
        se.raceId = tid;
        if (auto misuse = slots.onEvent(se); misuse && !misused) {
          misused = true;
          reports.push_back(*misuse);
        }
      }
    }
  }

  /// Which ranks share the rounds of `slot`, as the slot checker groups
  /// them: the node's for INTRA's slots, the rail's for INTER's, the
  /// world's for WORLD's.
  static int64_t teamOfSlot(const DevComm &dc, uint32_t slot) {
    if (dc.nNodes <= 1)
      return 0;
    TeamSlot ts = splitTeamSlot(slot, dc.nBarriers);
    if (ts.team == kTeamInter)
      return 1 + dc.rank;
    if (ts.team == kTeamWorld)
      return 0;
    return -1 - dc.node;
  }
};

} // namespace

extern "C" {

TLE_API tleResult_t tleInterpCheckStart(const char *dir, int32_t rank) {
  if (rec)
    return tleSuccess;
  if (!dir)
    return tleInvalidArgument;
  std::string clock = std::string(dir) + "/clock";
  int fd = ::open(clock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return tleSystemError;
  if (::ftruncate(fd, sizeof(SharedPage)) != 0) {
    ::close(fd);
    return tleSystemError;
  }
  void *page = ::mmap(nullptr, sizeof(SharedPage), PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
  ::close(fd);
  if (page == MAP_FAILED)
    return tleSystemError;
  std::string path =
      std::string(dir) + "/rank" + std::to_string(rank) + ".events";
  FILE *out = std::fopen(path.c_str(), "wb");
  if (!out) {
    ::munmap(page, sizeof(SharedPage));
    return tleSystemError;
  }
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  rec = new Recorder;
  rec->out = out;
  rec->page = static_cast<SharedPage *>(page);
  rec->rank = rank;
  interpChecking = true;
  return tleSuccess;
}

TLE_API void tleInterpCheckStop(void) {
  if (!rec)
    return;
  interpChecking = false;
  rec->flush();
  std::fclose(rec->out);
  ::munmap(rec->page, sizeof(SharedPage));
  delete rec;
  rec = nullptr;
}

TLE_API void tleInterpCheckLaunch(void) {
  if (!rec)
    return;
  rec->flush();
  ++rec->launch;
  rec->program = 0;
  rec->mapsStale = true;
  rec->inSignal = rec->inBarrier = false;
}

TLE_API void tleInterpCheckProgram(uint32_t program) {
  if (rec)
    rec->program = program;
}

TLE_API void tleInterpCheckSite(const char *site) {
  if (!rec)
    return;
  if (!site) {
    rec->site = 0;
    return;
  }
  auto [it, fresh] = rec->sites.try_emplace(site, rec->sites.size() + 1);
  if (fresh) {
    Rec r;
    r.type = kRecSite;
    r.site = it->second;
    r.bytes = static_cast<uint32_t>(it->first.size());
    rec->put(r, it->first.data(), it->first.size());
  }
  rec->site = it->second;
}

TLE_API void tleInterpCheckAccess(const uint64_t *addrs, uint64_t n,
                                  uint32_t bytes, int32_t kind, int32_t order) {
  if (!rec || !rec->launch || !addrs || !n || !bytes)
    return;
  std::vector<uint64_t> sorted(addrs, addrs + n);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  // Ordered atomics one element each (each word is its own release
  // sequence); relaxed ones, which carry no edge of their own, merge as
  // plain accesses do (a relaxed read-modify-write continues only the
  // first word's sequence then: a release store, a relaxed update and an
  // acquire load of one word in the middle of a block would lose the edge).
  bool single =
      kind != kAccessLoad && kind != kAccessStore && order != kOrderRelaxed;
  for (size_t i = 0; i < sorted.size();) {
    const Mapping *m = rec->find(sorted[i]);
    if (!m) {
      ++i;
      continue;
    }
    // Merged while they touch and stay in one mapping.
    size_t j = i + 1;
    uint64_t end = sorted[i] + bytes;
    if (!single)
      while (j < sorted.size() && sorted[j] == end && end < m->end) {
        end += bytes;
        ++j;
      }
    Rec r = rec->make(kRecAccess);
    r.key = m->key;
    r.off = sorted[i] - m->start + m->fileOff;
    r.bytes = static_cast<uint32_t>(end - sorted[i]);
    r.kind = kind;
    r.order = order;
    r.ticket = rec->ticket();
    rec->put(r);
    i = j;
  }
}

TLE_API void tleInterpCheckLock(void) {
  if (!rec)
    return;
  while (__atomic_exchange_n(&rec->page->lock, 1u, __ATOMIC_ACQUIRE) != 0)
    std::this_thread::yield();
}

TLE_API void tleInterpCheckUnlock(void) {
  if (rec)
    __atomic_store_n(&rec->page->lock, 0u, __ATOMIC_RELEASE);
}

TLE_API void tleInterpCheckName(const void *base, uint64_t bytes,
                                const char *name) {
  if (!rec || !base || !name)
    return;
  rec->mapsStale = true;
  const Mapping *m = rec->find(reinterpret_cast<uint64_t>(base));
  if (!m)
    return;
  Rec r;
  r.type = kRecName;
  r.key = m->key;
  r.off = reinterpret_cast<uint64_t>(base) - m->start + m->fileOff;
  r.off2 = bytes;
  r.bytes = static_cast<uint32_t>(std::strlen(name));
  rec->put(r, name, r.bytes);
  rec->mapsStale = true;
}

TLE_API int64_t tleInterpCheckRun(const char *dir, int32_t ranks, char *report,
                                  uint64_t capacity) {
  auto write = [&](const std::string &text) {
    if (report && capacity) {
      size_t n = std::min<size_t>(text.size(), capacity - 1);
      std::memcpy(report, text.data(), n);
      report[n] = '\0';
    }
  };
  if (!dir || ranks <= 0) {
    write("no event files to check");
    return -1;
  }
  std::vector<RankLog> logs(ranks);
  std::vector<Named> names;
  for (int32_t r = 0; r < ranks; ++r) {
    std::string why;
    if (!readLog(std::string(dir) + "/rank" + std::to_string(r) + ".events", r,
                 logs[r], names, why)) {
      write(why);
      return -1;
    }
  }
  // Every file a symmetric buffer lies in gets an address range of its own
  // (64 GiB apart), in which the buffer's copies are the checker's regions.
  std::map<uint64_t, uint64_t> bases;
  std::vector<RaceRegion> regions;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const Named &n : names) {
    auto [it, fresh] =
        bases.try_emplace(n.key, (uint64_t(1) << 44) + (bases.size() << 36));
    if (!seen.insert({n.key, n.off}).second)
      continue;
    regions.push_back({reinterpret_cast<const void *>(it->second + n.off),
                       n.bytes, n.name, n.rank});
  }
  std::map<std::pair<int32_t, uint64_t>, DevComm> comms;
  std::map<uint32_t, std::vector<Replay::Event>> launches;
  for (int32_t r = 0; r < ranks; ++r)
    for (const Rec &e : logs[r].events) {
      if (e.type == kRecComm) {
        DevComm &dc = comms[{r, e.key}];
        std::memset(&dc, 0, sizeof dc);
        dc.magic = kDevCommMagic;
        dc.rank = e.kind;
        dc.size = e.coop;
        dc.nBarriers = static_cast<uint32_t>(e.order);
        dc.node = e.phase;
        dc.nNodes = e.aux;
        continue;
      }
      if (e.launch)
        launches[e.launch].push_back({r, &e});
    }
  std::vector<std::string> reports;
  for (auto &[launch, events] : launches) {
    std::vector<std::string> found;
    Replay{logs, bases, regions, comms}.run(events, found);
    for (std::string &f : found)
      reports.push_back("launch " + std::to_string(launch) + ": " + f);
  }
  std::string text;
  for (const std::string &r : reports)
    text += (text.empty() ? "" : "\n\n") + r;
  write(text);
  return static_cast<int64_t>(reports.size());
}

} // extern "C"
