# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FlagTree's distributed TLE API on stock Triton and TLE.

A kernel written for FlagTree (``import triton.experimental.tle.language as
tle``) runs on stock Triton with ``import tle.flagtree as tle`` instead:
the same names and parameter orders (``distributed_barrier``, ``remote``,
``shard_id``, ``n_pes``, ``device_mesh``, ``MeshConfig``, ``device_type``,
the enums ``BarrierKind``, ``MemoryOrder``, ``GroupKind``, ``MemoryScope``,
and on the host ``get_mem_pool``, ``create_dist_tensor``,
``cleanup_communicator``), mapped onto TLE's builtins and runtime. TLE's
device bitcode is linked without ``extern_libs``, as FlagTree links its own.

What differs (barriers and pointers between nodes, the constexpr context,
what is refused and why) is listed in docs/flagtree.md. The constexpr
context of ``create_dist_tensor`` exists in this module only: TLE's own API
(``tle.language``, ``tle.torch``) keeps the communicator a runtime argument.
"""

from . import _link
from .context import DistContext
from .host import cleanup_communicator, communicator, create_dist_tensor, device_type, get_mem_pool
from .language import (BarrierKind, GroupKind, MemoryOrder, MemoryScope, distributed_barrier, n_pes, remote,
                       session_close, session_open, shard_id, signal, signal_wait)
from .mesh import MeshConfig, device_mesh

# FlagTree's kernels pass no extern_libs: link TLE's bitcode into every
# kernel that calls it (see _link).
_link.install()

__all__ = [
    "BarrierKind", "DistContext", "GroupKind", "MemoryOrder", "MemoryScope", "MeshConfig", "cleanup_communicator",
    "communicator",
    "create_dist_tensor", "device_mesh", "device_type", "distributed_barrier", "get_mem_pool", "n_pes", "remote",
    "session_close", "session_open", "shard_id", "signal", "signal_wait"
]
