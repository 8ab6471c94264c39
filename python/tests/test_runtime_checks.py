# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.runtime's argument checks: an integer that does not fit the C type
it is passed as raises instead of being wrapped by ctypes, and a device
list must name one device per rank (the C API reads n_ranks entries).
Every case here used to reach libtle with a different value."""

from __future__ import annotations

import pytest

from tle import runtime
from tle.runtime import Backend, Comm


pytestmark = pytest.mark.usefixtures("host_library")


@pytest.mark.parametrize("kwargs, error, message", [
    # The reproducers: 2**32 + 3 barriers used to become 3, and
    # 2**64 - 1 ms used to become -1 (the default deadline).
    ({"n_barriers": 2**32 + 3}, ValueError, r"n_barriers must be in \[0, 4294967295\]; got 4294967299"),
    ({"timeout_ms": 2**64 - 1}, ValueError, r"timeout_ms must be in \[-9223372036854775808, 9223372036854775807\]"),
    ({"timeout_ms": -2**63 - 1}, ValueError, r"timeout_ms must be in"),
    ({"n_barriers": 0}, ValueError, r"n_barriers must be positive; got 0"),
    ({"n_barriers": 1.5}, TypeError, r"n_barriers must be an integer; got 1.5"),
    ({"n_barriers": True}, TypeError, r"n_barriers must be an integer, not a bool"),
    ({"timeout_ms": "10"}, TypeError, r"timeout_ms must be an integer; got '10'"),
])
def test_init_all_config_out_of_range(kwargs, error, message):
    with pytest.raises(error, match=message):
        Comm.init_all(2, backend=Backend.EMULATOR, **kwargs)


def test_init_all_devices_must_name_every_rank():
    # The reproducer: three ranks, one device; libtle read past it.
    with pytest.raises(ValueError, match=r"devices must name one device per rank: 3 ranks, 1 devices"):
        Comm.init_all(3, devices=[0], backend=Backend.EMULATOR)
    with pytest.raises(ValueError, match=r"2 ranks, 3 devices"):
        Comm.init_all(2, devices=[0, 1, 2], backend=Backend.EMULATOR)
    with pytest.raises(ValueError, match=r"devices\[1\] must be in \[-2147483648, 2147483647\]; got 4294967296"):
        Comm.init_all(2, devices=[0, 2**32], backend=Backend.EMULATOR)
    comms = Comm.init_all(2, devices=(0, 1), backend=Backend.EMULATOR)
    try:
        assert [c.rank for c in comms] == [0, 1]
    finally:
        for c in comms:
            c.destroy()


@pytest.mark.parametrize("n_ranks", [2**32 + 1, -2**31 - 1])
def test_rank_counts_out_of_range(n_ranks):
    # 2**32 + 1 used to reach libtle as 1 rank.
    with pytest.raises(ValueError, match=r"n_ranks must be in \[-2147483648, 2147483647\]"):
        Comm.init_all(n_ranks, backend=Backend.EMULATOR)
    with pytest.raises(ValueError, match=r"n_ranks must be in"):
        Comm.init_rank(n_ranks, runtime.get_unique_id(), 0, 0, backend=Backend.EMULATOR)


@pytest.mark.parametrize("name, args", [
    ("rank", (2, 2**32, 0)),
    ("device", (2, 0, -2**31 - 1)),
])
def test_init_rank_arguments_out_of_range(name, args):
    n_ranks, rank, device = args
    with pytest.raises(ValueError, match=rf"{name} must be in"):
        Comm.init_rank(n_ranks, runtime.get_unique_id(), rank, device, backend=Backend.EMULATOR)


def test_buffer_sizes_out_of_range():
    comms = Comm.init_all(1, backend=Backend.EMULATOR)
    try:
        # -1 used to reach libtle as SIZE_MAX, 2**64 as 0.
        for nbytes in (-1, 2**64):
            with pytest.raises(ValueError, match=r"nbytes must be in \[0, 18446744073709551615\]"):
                comms[0].alloc(nbytes)
            with pytest.raises(ValueError, match=r"nbytes must be in"):
                Comm.alloc_all(comms, nbytes)
        with pytest.raises(TypeError, match=r"nbytes must be an integer; got 64.0"):
            comms[0].alloc(64.0)
        mem = comms[0].alloc(64)
        assert mem.local_ptr
        mem.free()
    finally:
        for c in comms:
            c.destroy()
