# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What ``create_dist_tensor`` returns: the compile-time context of a
FlagTree-style kernel.

FlagTree's kernels take the registered buffer and the communicator as one
``tl.constexpr`` argument, so both addresses are compiled into the kernel.
``DistContext`` keeps that contract for ``tle.flagtree`` only; TLE's own API
(``tle.language``) takes the communicator and buffers as runtime arguments,
so a new communicator reuses the compiled kernel, and ``tle.flagtree``'s
builtins accept those too.

Triton keys its caches on a constexpr's ``repr`` (on disk) and on its hash
and equality (in memory). The ``repr`` therefore holds everything the
compiled code depends on: both addresses, the rank (another process maps
memory at other addresses), a tag unique to the communicator (so that no
kernel is ever shared between communicators, even one that happens to get
the same addresses) and a hash of TLE's bitcode (which the automatic
linking adds to the kernel; see ``_link``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DistContext"]


@dataclass(frozen=True)
class DistContext:
    """A registered buffer and its communicator, as compile-time constants.

    ``ctx[0]`` is the buffer's device handle and ``ctx[1]`` the device
    communicator, FlagTree's order.
    """
    mem: int
    dev_comm: int
    rank: int
    size: int
    #: The communicator spans the whole job (one node): ``space="world"``
    #: is then its intra-node barrier.
    spans_world: bool
    #: Unique to the communicator: "<pid>.<serial>" of the rank that made it.
    comm_tag: str
    #: Short hash of the device bitcode kernels link ("none" without one).
    bitcode: str

    def __getitem__(self, index: int) -> int:
        return (self.mem, self.dev_comm)[index]

    def get_packed_data(self) -> tuple[int, int]:
        """(buffer handle, communicator), as FlagTree's context packs them."""
        return self.mem, self.dev_comm

    @property
    def mem_ptr(self) -> int:
        return self.mem

    @property
    def comm_ptr(self) -> int:
        return self.dev_comm

    def __repr__(self) -> str:
        return (f"DistContext(comm={self.comm_tag}, rank={self.rank}/{self.size}, dev_comm=0x{self.dev_comm:x}, "
                f"mem=0x{self.mem:x}, world={int(self.spans_world)}, bitcode={self.bitcode})")

    #: Triton's on-disk cache key takes ``cache_key`` when a constant has one.
    cache_key = property(__repr__)
