/*===- InterpCheck.h - Race and slot checks of Triton's interpreter -----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Under TRITON_INTERPRET=1 each CPU rank is a process of its own (python
 * -m tle.launch), so no one process sees every rank's accesses as they
 * happen, and the emulator's checkers (Race.h, Slots.h) cannot run inside
 * a launch as they do for tlerun. Instead each rank records what a checker
 * needs into a file of events, and the launcher replays every rank's file
 * through one RaceChecker and one SlotChecker per launch after the ranks
 * have ended (docs/triton.md, "Race and slot checks").
 *
 * A rank records
 *   - the interpreter's loads, stores and atomics on shared memory
 *     (tleInterpCheckAccess, called by tle._interp's builder), and the
 *     device library's data copies (its tleEmuAccess off a fiber);
 *   - the device library's barrier events (tleEmuBarrierEvent), from which
 *     the replay derives the barrier's edges: an arrive or sync with a
 *     release order releases into the slot's round, the end of the wait or
 *     sync with an acquire order acquires what every rank released into it;
 *   - a signal's release (at the begin of its add, on the word the add
 *     lands on) and every acquire load of the device library (a signal
 *     wait's last poll, a read_signal), which acquire the word's releases.
 * Events carry a ticket from a counter every rank shares, taken before a
 * release and after an acquire, so that sorting by ticket gives an order
 * in which each acquire comes after the release it saw. The interpreter's
 * own atomics take the ticket under a lock the ranks share, so that their
 * ticket order is the order of the atomics themselves.
 *
 * Addresses are recorded as (file, offset) of the shared mapping they lie
 * in (/proc/self/maps), which names the same byte in every rank's process
 * although each maps it at its own address; private memory is not
 * recorded.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TLE_HOST_EMU_INTERPCHECK_H
#define TLE_HOST_EMU_INTERPCHECK_H

#include "tle/tle.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Starts recording this process's events as world rank `rank` into
 *  `dir`/rank<rank>.events, with the ticket counter `dir`/clock (made by
 *  the first rank to start). */
TLE_API tleResult_t tleInterpCheckStart(const char *dir, int32_t rank);
/** Writes what is buffered and stops recording; idempotent. */
TLE_API void tleInterpCheckStop(void);
/** An interpreted launch begins (its programs follow). */
TLE_API void tleInterpCheckLaunch(void);
/** Program `program` (linear id) of the launch runs from now on. */
TLE_API void tleInterpCheckProgram(uint32_t program);
/** Where the next accesses and device-library calls are: "file:line" (a
 *  copy is kept), or null. */
TLE_API void tleInterpCheckSite(const char *site);
/** The current program accessed `bytes` at each of the `n` addresses
 *  (`kind` an AccessKind, `order` a MemoryOrder for atomics). */
TLE_API void tleInterpCheckAccess(const uint64_t *addrs, uint64_t n,
                                  uint32_t bytes, int32_t kind, int32_t order);
/** The lock the ranks' interpreted atomics take around the atomic and its
 *  tleInterpCheckAccess. */
TLE_API void tleInterpCheckLock(void);
TLE_API void tleInterpCheckUnlock(void);
/** This rank's copy of a symmetric buffer, `bytes` at `base`, is called
 *  `name` in reports. */
TLE_API void tleInterpCheckName(const void *base, uint64_t bytes,
                                const char *name);
/** Replays the event files of ranks 0..ranks-1 in `dir`; writes the reports
 *  (at most `capacity` - 1 bytes, NUL-terminated) to `report` and returns
 *  how many misuses were found, or -1 when a file cannot be read (the
 *  reason in `report`). */
TLE_API int64_t tleInterpCheckRun(const char *dir, int32_t ranks, char *report,
                                  uint64_t capacity);

#ifdef __cplusplus
} /* extern "C" */

namespace tle::emu::detail {
/// Whether this process records (tleInterpCheckStart); the hooks test it
/// before anything else.
extern bool interpChecking;
/// tleEmuAccess and tleEmuBarrierEvent off a fiber, while recording.
void interpCheckHookAccess(const void *addr, uint64_t bytes, int kind,
                           int order);
void interpCheckHookEvent(const void *comm, int kind, int coop, uint32_t slot,
                          int order, int phase);
/// tleEmuSignal off a fiber: a signal word's add and reset, which reach
/// the emulator only through it, as the atomics they are (its waits and
/// reads already came as the word's loads).
void interpCheckHookSignal(const void *word, int event, int order);
} // namespace tle::emu::detail
#endif

#endif /* TLE_HOST_EMU_INTERPCHECK_H */
