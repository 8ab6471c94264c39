# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FlagTree's description of where a kernel runs: ``MeshConfig`` and
``device_mesh``.

A mesh is a shape with a name per axis, built from topology levels (``node``,
``device``, ``block_cluster``, ``block``), each one axis named after the level
(an int) or several named axes (a list of ``(name, size)``). Slicing a mesh
keeps the selected members' linear ids in the original ("launch") mesh, which
is what ``shard_id`` and the barrier's checks read. Meshes are compile-time
values (``tl.constexpr`` kernel arguments), so they compare and hash by value
and their ``repr`` tells any two different meshes apart: Triton keys its
kernel cache on that ``repr``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence, Union

__all__ = ["MeshConfig", "device_mesh"]

#: A level: one axis of that size, or named axes.
Level = Union[int, Sequence[tuple[str, int]]]


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{what} must be > 0, got {value}")
    return value


@dataclass
class MeshConfig:
    """The levels of a mesh, outermost first; None leaves a level out."""
    node: Level | None = None
    device: Level | None = None
    block_cluster: Level | None = None
    block: Level | None = None

    def to_dict(self) -> dict[str, Level]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def __repr__(self) -> str:
        return "MeshConfig(" + ", ".join(f"{k}={v}" for k, v in self.to_dict().items()) + ")"


def _axes_of(level: str, desc: Any) -> list[tuple[str, int]]:
    if isinstance(desc, int) and not isinstance(desc, bool):
        return [(level, _positive(desc, level))]
    if not isinstance(desc, (list, tuple)):
        raise TypeError(f"topology[{level!r}] must be an int or a list of (name, size), got {type(desc).__name__}")
    if not desc:
        raise ValueError(f"topology[{level!r}] cannot be empty")
    axes = []
    for item in desc:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise ValueError(f"topology[{level!r}] entries must be (name, size), got {item!r}")
        name, size = item
        if not isinstance(name, str) or not name:
            raise ValueError(f"invalid axis name in {level!r}: {name!r}")
        axes.append((name, _positive(size, f"{level}.{name}")))
    return axes


class device_mesh:  # noqa: N801 -- FlagTree's name
    """A logical view of devices (or blocks): a shape with axis names.

    ``device_mesh({"node": 2, "device": 4})`` or
    ``device_mesh(MeshConfig(device=[("x", 2), ("y", 2)]))``. Indexing with
    ints and slices gives sub-meshes (an int drops its axis); ``reshape``
    and ``flatten`` rename the axes. ``launch_shape`` and
    ``launch_dim_names`` always describe the mesh it was cut from.
    """

    def __init__(self, topology: Mapping[str, Level] | MeshConfig | None = None, *,
                 _shape: Sequence[int] | None = None, _dim_names: Sequence[str] | None = None,
                 _physical_ids: Sequence[int] | None = None, _launch_shape: Sequence[int] | None = None,
                 _launch_dim_names: Sequence[str] | None = None):
        if topology is None:
            if _shape is None or _dim_names is None or _physical_ids is None:
                raise ValueError("device_mesh needs a topology (a mapping or a MeshConfig)")
            self._shape = tuple(_shape)
            self._dim_names = tuple(_dim_names)
            self._physical_ids = tuple(_physical_ids)
            self._launch_shape = tuple(_launch_shape if _launch_shape is not None else _shape)
            self._launch_dim_names = tuple(_launch_dim_names if _launch_dim_names is not None else _dim_names)
            return
        if isinstance(topology, MeshConfig):
            topology = topology.to_dict()
        if not isinstance(topology, Mapping):
            raise TypeError(f"topology must be a Mapping or MeshConfig, got {type(topology).__name__}")
        if not topology:
            raise ValueError("topology cannot be empty")
        axes: list[tuple[str, int]] = []
        for level, desc in topology.items():
            if not isinstance(level, str) or not level:
                raise ValueError(f"invalid topology level name: {level!r}")
            axes.extend(_axes_of(level, desc))
        names = [name for name, _ in axes]
        if len(set(names)) != len(names):
            raise ValueError(f"axis names must be unique, got {names}")
        self._shape = tuple(size for _, size in axes)
        self._dim_names = tuple(names)
        self._physical_ids = tuple(range(math.prod(self._shape)))
        self._launch_shape = self._shape
        self._launch_dim_names = self._dim_names

    shape = property(lambda self: self._shape)
    dim_names = property(lambda self: self._dim_names)
    physical_ids = property(lambda self: self._physical_ids)
    launch_shape = property(lambda self: self._launch_shape)
    launch_dim_names = property(lambda self: self._launch_dim_names)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return len(self._physical_ids)

    def _derived(self, shape: Sequence[int], names: Sequence[str], ids: Sequence[int]) -> device_mesh:
        return device_mesh(None, _shape=shape, _dim_names=names, _physical_ids=ids, _launch_shape=self._launch_shape,
                           _launch_dim_names=self._launch_dim_names)

    def flatten(self) -> device_mesh:
        return self.reshape(self.size)

    def reshape(self, *shape: int | Sequence[int]) -> device_mesh:
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else tuple(shape)
        if not dims:
            raise ValueError("new shape cannot be empty")
        dims = tuple(_positive(d, "shape dimension") for d in dims)
        if math.prod(dims) != self.size:
            raise ValueError(f"cannot reshape a mesh of size {self.size} into shape {dims}")
        if len(dims) == self.ndim:
            names = self._dim_names
        elif len(dims) == 1:
            names = ("flat",)
        else:
            names = tuple(f"dim{i}" for i in range(len(dims)))
        return self._derived(dims, names, self._physical_ids)

    def __getitem__(self, key: Any) -> device_mesh:
        key = key if isinstance(key, tuple) else (key,)
        if key.count(Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis")
        if Ellipsis in key:
            at = key.index(Ellipsis)
            fill = self.ndim - (len(key) - 1)
            if fill < 0:
                raise IndexError("too many indices for device_mesh")
            key = key[:at] + (slice(None),) * fill + key[at + 1:]
        if len(key) > self.ndim:
            raise IndexError("too many indices for device_mesh")
        key = key + (slice(None),) * (self.ndim - len(key))
        picks: list[list[int]] = []
        kept: list[bool] = []
        for size, k in zip(self._shape, key):
            if isinstance(k, int) and not isinstance(k, bool):
                i = k + size if k < 0 else k
                if not 0 <= i < size:
                    raise IndexError(f"index {k} out of range for an axis of size {size}")
                picks.append([i])
                kept.append(False)
            elif isinstance(k, slice):
                picked = list(range(*k.indices(size)))
                if not picked:
                    raise ValueError("empty sub-mesh is not supported")
                picks.append(picked)
                kept.append(True)
            else:
                raise TypeError(f"device_mesh indices must be int/slice/ellipsis, got {type(k).__name__}")
        strides = [math.prod(self._shape[i + 1:]) for i in range(self.ndim)]
        ids = tuple(self._physical_ids[sum(c * s for c, s in zip(coords, strides))]
                    for coords in itertools.product(*picks))
        shape = tuple(len(p) for p, keep in zip(picks, kept) if keep)
        names = tuple(n for n, keep in zip(self._dim_names, kept) if keep)
        return self._derived(shape, names, ids)

    def _key(self) -> tuple:
        return (self._shape, self._dim_names, self._physical_ids, self._launch_shape, self._launch_dim_names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device_mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __deepcopy__(self, memo) -> device_mesh:
        # Immutable: Triton deep-copies the globals a kernel reads to detect
        # changes, and a copy must compare equal (it does) at no cost.
        return self

    def __repr__(self) -> str:
        text = f"DeviceMesh(shape={self._shape}, names={self._dim_names}"
        if (self._shape, self._dim_names) != (self._launch_shape, self._launch_dim_names) or \
                self._physical_ids != tuple(range(self.size)):
            # A sub-mesh or a reshaped mesh: what tells it from a fresh mesh
            # of the same shape (Triton's cache key is this text).
            text += f", ids={self._physical_ids}, launch={self._launch_shape}/{self._launch_dim_names}"
        return text + ")"
