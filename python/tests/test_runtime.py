# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.runtime, the ctypes binding of libtle.so, against the CPU emulator
backend (the CI build of libtle.so has no CUDA backend)."""

from __future__ import annotations

import ctypes
import threading

import pytest

import tle
from tle import runtime
from tle.runtime import Backend, Comm, Result, TLEError


pytestmark = pytest.mark.usefixtures("host_library")


def test_unique_ids_are_fresh_128_byte_blobs():
    a, b = runtime.get_unique_id(), runtime.get_unique_id()
    assert len(a) == len(b) == runtime.UNIQUE_ID_BYTES
    assert a != b


def test_init_all_queries_and_symmetric_memory():
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_barriers=8)
    try:
        assert [c.rank for c in comms] == [0, 1]
        assert [c.size for c in comms] == [2, 2]
        assert all(c.backend is Backend.EMULATOR for c in comms)
        assert all(c.dev_comm for c in comms) and comms[0].dev_comm != comms[1].dev_comm
        mems = Comm.alloc_all(comms, 256)
        assert all(m.dev_handle and m.local_ptr for m in mems)
        assert mems[0].local_ptr != mems[1].local_ptr
        # Emulator memory is host memory: zero-filled, as the API promises.
        assert ctypes.string_at(mems[1].local_ptr, 256) == bytes(256)
        assert all(c.get_error() is None for c in comms)
        for c in comms:
            c.check_error()
        for m in mems:
            m.free()
            m.free()  # idempotent
        with pytest.raises(ValueError, match="freed"):
            mems[0].local_ptr
    finally:
        for c in comms:
            c.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        comms[0].rank


def test_init_rank_bootstraps_one_comm_per_thread():
    unique_id = runtime.get_unique_id()
    comms: dict[int, Comm] = {}
    errors: list[BaseException] = []

    def join(rank: int) -> None:
        try:
            comms[rank] = Comm.init_rank(2, unique_id, rank, 0, backend=Backend.EMULATOR,
                                         bootstrap_timeout_ms=20000)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=join, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors, errors
        assert sorted((c.rank, c.size) for c in comms.values()) == [(0, 2), (1, 2)]
    finally:
        for c in comms.values():
            c.destroy()


def test_register_shares_memory_the_ranks_already_have():
    """Comm.register on the ranks of one process (a thread each, as the
    collective needs): the handle maps each rank's own memory, a peer's
    store lands in it, a size mismatch fails every rank, and freeing the
    registration leaves the memory to its owner."""
    comms = Comm.init_all(2, backend=Backend.EMULATOR)
    arrays = [(ctypes.c_uint32 * 64)() for _ in comms]

    def on_both(nbytes_of) -> list:
        out: list = [None, None]

        def run(r: int) -> None:
            try:
                out[r] = comms[r].register(ctypes.addressof(arrays[r]), nbytes_of(r))
            except TLEError as e:
                out[r] = e

        threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return out

    try:
        mems = on_both(lambda r: 256)
        assert [m.local_ptr for m in mems] == [ctypes.addressof(a) for a in arrays]
        # Rank 1's copy as rank 0's handle has it, asked of the device
        # library (the interpreter's entry point of tle_remote_pointer).
        from tle import _interp
        remote_pointer = _interp._entry_point("tle_remote_pointer", ("int64", "int64", "int32"), "int64")
        out, info = ctypes.c_int64(), runtime._ErrorInfo()
        program = _interp._Program((ctypes.c_uint32 * 3)(0, 0, 0), (ctypes.c_uint32 * 3)(1, 1, 1))
        assert remote_pointer(ctypes.byref(program), mems[0].dev_handle, 0, 1, ctypes.byref(out),
                              ctypes.byref(info)) == Result.SUCCESS
        peer_of_0 = out.value
        assert peer_of_0 == ctypes.addressof(arrays[1])
        ctypes.c_uint32.from_address(peer_of_0).value = 7
        assert arrays[1][0] == 7
        for m in mems:
            m.free()
        arrays[0][0] = 1  # still the caller's
        refused = on_both(lambda r: 64 * (r + 1))
        assert all(isinstance(e, TLEError) and e.code is Result.INVALID_ARGUMENT for e in refused)
        assert "rank 1 asked for 128 bytes, rank 0 for 64" in str(refused[0])
    finally:
        for c in comms:
            c.destroy()


def test_shareable_host_memory():
    address = runtime.shareable_alloc(5000, -1)
    try:
        assert address % 4096 == 0
        assert ctypes.string_at(address, 5000) == bytes(5000)
    finally:
        runtime.shareable_free(address, -1)
    with pytest.raises(RuntimeError, match="built without CUDA"):
        runtime.shareable_alloc(64, 0)


def test_c_api_errors_raise_tle_error_with_string_and_detail():
    with pytest.raises(TLEError) as info:
        Comm.init_all(0, backend=Backend.EMULATOR)
    assert info.value.code is Result.INVALID_ARGUMENT
    assert str(info.value).startswith("tleCommInitAll(0): invalid argument")
    assert info.value.detail  # tleGetLastErrorDetail says which argument


def test_bad_python_arguments_are_rejected_before_the_c_api():
    with pytest.raises(ValueError, match="n_barriers must be positive"):
        Comm.init_all(2, n_barriers=0)
    with pytest.raises(ValueError, match="unique_id must be 128 bytes"):
        Comm.init_rank(2, b"short", 0, 0)


def test_extern_libs_names_the_bitcode(bitcode):
    assert tle.extern_libs() == {"tle": bitcode}


def test_import_all_wraps_user_memory_and_frees_none_of_it():
    user = [ctypes.create_string_buffer(4096) for _ in range(2)]
    ptrs = [ctypes.addressof(b) for b in user]
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_barriers=8)
    try:
        mems = Comm.import_all(comms, ptrs, 4096)
        assert [m.local_ptr for m in mems] == ptrs
        # The handle's ptrs[] (after magic, rank, size, pad, bytes, error) lists the user's copies.
        for m in mems:
            assert list((ctypes.c_void_p * 2).from_address(m.dev_handle + 32)) == ptrs
        for m in mems:
            m.free()
        ctypes.memset(ptrs[1], 7, 4096)  # still the caller's memory
        assert user[1].raw[4095] == 7
    finally:
        for c in comms:
            c.destroy()


def test_import_mem_exchanges_addresses_between_threads_of_one_process():
    user = [ctypes.create_string_buffer(256) for _ in range(2)]
    ptrs = [ctypes.addressof(b) for b in user]
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_barriers=8)
    mems: dict[int, runtime.Mem] = {}
    errors: list[BaseException] = []

    def run(rank: int) -> None:
        try:
            mems[rank] = comms[rank].import_mem(ptrs[rank], 256)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        assert [mems[r].local_ptr for r in range(2)] == ptrs
    finally:
        for m in mems.values():
            m.free()
        for c in comms:
            c.destroy()


def test_import_arguments_are_checked():
    comms = Comm.init_all(1, backend=Backend.EMULATOR, n_barriers=8)
    try:
        with pytest.raises(ValueError, match="one address per rank"):
            Comm.import_all(comms, [], 64)
        with pytest.raises(ValueError, match="peer_ptrs"):
            comms[0].import_mem(4096, 64, peer_ptrs=[1, 2])
        with pytest.raises(TLEError, match="not all mapped") as info:
            comms[0].import_mem(4096, 64)  # the first page is never mapped
        assert info.value.code is Result.INVALID_ARGUMENT
    finally:
        comms[0].destroy()


def test_alloc_types_are_accepted_by_every_backend():
    unique_id = runtime.get_unique_id()
    comm = Comm.init_rank(1, unique_id, 0, 0, backend=Backend.EMULATOR, alloc=runtime.Alloc.CU_MEM)
    comm.destroy()
    with pytest.raises(TLEError, match="allocType 9"):
        Comm.init_rank(1, runtime.get_unique_id(), 0, 0, backend=Backend.EMULATOR, alloc=9)


def test_init_from_nccl_without_a_loaded_nccl_says_so():
    # No libnccl in this process: the run-time lookup fails before the
    # (fake) communicator address is ever touched.
    with pytest.raises(TLEError, match="no NCCL library is loaded") as info:
        Comm.init_from_nccl(0x1000, backend=Backend.EMULATOR)
    assert info.value.code is Result.NOT_SUPPORTED
