//===- rules.h - The legality rules of tle/rules.def as C++ -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Constant-evaluable queries over tle/rules.def, for C++ consumers: the
// dialect's verifiers ask which orders, groups and teams go together, and
// the device library takes the halves of each order from here (impl/Check.h).
// Header-only and LLVM-free, usable in host and device code alike.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_RULES_H
#define TLE_RULES_H

#include "tle/abi.h"

#ifdef __cplusplus
namespace tle::rules {

/// The operations of rules.def's TLE_ORDER_RULE.
enum class OrderUse : int {
#define TLE_ORDER_RULE(Use, Spelling, Relaxed, Acquire, Release, AcqRel,       \
                       SeqCst)                                                 \
  Use,
#include "tle/rules.def"
};

/// The kinds of call of rules.def's TLE_GROUP_USE.
enum class GroupUse : int {
#define TLE_GROUP_USE(Use, Spelling) Use,
#include "tle/rules.def"
};

/// Whether `use` accepts memory order `order` (an abi.def MemoryOrder).
constexpr bool acceptsOrder(OrderUse use, int order) {
  unsigned accepted = 0;
  switch (use) {
#define TLE_ORDER_RULE(Use, Spelling, Relaxed, Acquire, Release, AcqRel,       \
                       SeqCst)                                                 \
  case OrderUse::Use:                                                          \
    accepted = (Relaxed << kOrderRelaxed) | (Acquire << kOrderAcquire) |       \
               (Release << kOrderRelease) | (AcqRel << kOrderAcqRel) |         \
               (SeqCst << kOrderSeqCst);                                       \
    break;
#include "tle/rules.def"
  }
  return order >= kOrderRelaxed && order <= kOrderSeqCst &&
         ((accepted >> order) & 1u);
}

/// The barrier half `kind` (an abi.def BarrierKind) as an OrderUse.
constexpr OrderUse barrierOrderUse(int kind) {
  return kind == kBarrierArrive ? OrderUse::Arrive
         : kind == kBarrierWait ? OrderUse::Wait
                                : OrderUse::Sync;
}

/// Whether calls of kind `use` executed by group `group` (a CoopKind) are
/// served on team `team` (a TeamKind).
constexpr bool servesGroup(GroupUse use, int group, int team) {
#define TLE_GROUP_RULE(Use, Group, Intra, Inter, World)                        \
  if (use == GroupUse::Use && group == kCoop##Group)                           \
    return team == kTeamIntra   ? Intra != 0                                   \
           : team == kTeamInter ? Inter != 0                                   \
           : team == kTeamWorld ? World != 0                                   \
                                : false;
#include "tle/rules.def"
  return false;
}

/// Whether group `group` serves `use` on some team.
constexpr bool servesGroupOnSomeTeam(GroupUse use, int group) {
  return servesGroup(use, group, kTeamIntra) ||
         servesGroup(use, group, kTeamInter) ||
         servesGroup(use, group, kTeamWorld);
}

/// The halves of rules.def's TLE_ORDER_HALVES: whether `order` orders
/// memory in an acquire (a wait, an observer) or a release (an arrive, a
/// publisher).
constexpr bool orderAcquires(int order) {
#define TLE_ORDER_HALVES(Order, Acquires, Releases)                            \
  if (order == kOrder##Order)                                                  \
    return Acquires != 0;
#include "tle/rules.def"
  return false;
}
constexpr bool orderReleases(int order) {
#define TLE_ORDER_HALVES(Order, Acquires, Releases)                            \
  if (order == kOrder##Order)                                                  \
    return Releases != 0;
#include "tle/rules.def"
  return false;
}

/// The device library tests an order's halves with one or two compares on
/// the encoding (impl/Check.h): the releasing orders are those from
/// kFirstReleasing up, the acquiring ones kAcquireOnly and those from
/// kFirstBoth up. These are the three numbers, and the asserts below fail
/// the build where the halves stop having that shape.
constexpr int firstOrderWhere(bool acquires, bool releases, bool exact) {
  for (int o = kOrderRelaxed; o <= kOrderSeqCst; ++o)
    if (exact ? orderAcquires(o) == acquires && orderReleases(o) == releases
              : (!acquires || orderAcquires(o)) &&
                    (!releases || orderReleases(o)))
      return o;
  return kOrderSeqCst + 1;
}
constexpr int kFirstReleasing = firstOrderWhere(false, true, false);
constexpr int kAcquireOnly = firstOrderWhere(true, false, true);
constexpr int kFirstBoth = firstOrderWhere(true, true, false);

constexpr bool halvesAreCompares() {
  for (int o = kOrderRelaxed; o <= kOrderSeqCst; ++o)
    if (orderReleases(o) != (o >= kFirstReleasing) ||
        orderAcquires(o) != (o == kAcquireOnly || o >= kFirstBoth))
      return false;
  return true;
}
static_assert(halvesAreCompares(),
              "rules.def's order halves are no longer the compares of "
              "impl/Check.h's releases() and acquires()");

/// A barrier half accepts relaxed and exactly the orders that order memory
/// in the half it performs: rules.def's Arrive, Wait and Sync rows follow
/// from its halves, and the build fails where they stop doing so.
constexpr bool barrierRulesFollowHalves() {
  for (int o = kOrderRelaxed; o <= kOrderSeqCst; ++o) {
    bool ordered = orderAcquires(o) || orderReleases(o);
    if (acceptsOrder(OrderUse::Arrive, o) != (!ordered || orderReleases(o)) ||
        acceptsOrder(OrderUse::Wait, o) != (!ordered || orderAcquires(o)) ||
        !acceptsOrder(OrderUse::Sync, o))
      return false;
  }
  return true;
}
static_assert(barrierRulesFollowHalves(),
              "rules.def's barrier order rules disagree with its halves");

} // namespace tle::rules
#endif // __cplusplus

#endif // TLE_RULES_H
