"""The published agent's network, read and evaluated with numpy alone.

The agent (henrycharlesworth/big2_PPOalgorithm) is a small multilayer perceptron: 412 inputs, a
shared ReLU layer of 512, then a policy head (ReLU 256, then 1695 logits, one per action) and a
value head (ReLU 256, then one number). Its trained parameters, ``modelParameters136500``, are the
list of TensorFlow variables in creation order (``fc1`` weights and bias, ``fc2``, ``pi``, ``fc3``,
``vf``), saved with ``joblib.dump``: a pickle whose arrays are written as raw bytes right after
joblib placeholders. :func:`load_weights` reads that format with the standard library's pure-Python
unpickler and numpy, refusing any class other than the three the format uses, so neither joblib
nor TensorFlow is needed (and no code in the file can run).
"""

from __future__ import annotations

import hashlib
import io
import math
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

INPUTS = 412
ACTIONS = 1695
HIDDEN = (512, 256)

# (name, shape) of every parameter, in the order the file holds them.
LAYOUT: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("fc1/w", (INPUTS, 512)),
    ("fc1/b", (512,)),
    ("fc2/w", (512, 256)),
    ("fc2/b", (256,)),
    ("pi/w", (256, ACTIONS)),
    ("pi/b", (ACTIONS,)),
    ("fc3/w", (512, 256)),
    ("fc3/b", (256,)),
    ("vf/w", (256, 1)),
    ("vf/b", (1,)),
)

Array = NDArray[np.float32]


class WeightsError(Exception):
    """The weights file is missing, unreadable or not the agent's layout (the message says which)."""


@dataclass(frozen=True, slots=True)
class Weights:
    arrays: tuple[Array, ...]
    """One array per :data:`LAYOUT` entry, float32."""
    sha256: str
    """Of the file they were read from (names the exact parameters a measurement used)."""

    def named(self, name: str) -> Array:
        return self.arrays[[entry for entry, _ in LAYOUT].index(name)]


@dataclass(frozen=True, slots=True)
class Output:
    logits: NDArray[np.float64]
    """The policy head's raw output, one per action (before any mask)."""
    value: float


def forward(weights: Weights, state: NDArray[np.float64] | NDArray[np.int8]) -> Output:
    """The network on one 412-number state, as PPONetwork builds it (x·W + b, ReLU)."""
    w1, b1, w2, b2, wp, bp, w3, b3, wv, bv = weights.arrays
    x = np.asarray(state, dtype=np.float32)
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    h3 = np.maximum(h1 @ w3 + b3, 0)
    logits = (h2 @ wp + bp).astype(np.float64)
    value = float((h3 @ wv + bv)[0])
    return Output(logits, value)


class _ArrayPlaceholder:
    """What joblib pickles in place of an array: its shape, order and dtype (read by BUILD)."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.state = state


# The only globals a joblib array list refers to; anything else is refused, not imported.
_ALLOWED = {
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _ArrayPlaceholder,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class _JoblibArrays(pickle._Unpickler):
    """The pure-Python unpickler (its ``read`` follows the file exactly, so the raw array bytes
    that joblib writes after each placeholder are read where they sit)."""

    dispatch: ClassVar[dict[int, Any]] = dict(pickle._Unpickler.dispatch)

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise WeightsError(f"the file refers to {module}.{name}: not a joblib list of arrays") from None

    def _load_build(self) -> None:
        pickle._Unpickler.dispatch[pickle.BUILD[0]](self)  # type: ignore[arg-type]
        stack: list[Any] = self.stack  # type: ignore[attr-defined]
        if isinstance(stack[-1], _ArrayPlaceholder):
            stack[-1] = self._read_array(stack[-1].state)

    dispatch[pickle.BUILD[0]] = _load_build

    def _read_array(self, state: dict[str, Any]) -> NDArray[Any]:
        dtype = np.dtype(state["dtype"])
        shape = tuple(int(n) for n in state["shape"])
        if dtype.hasobject:
            raise WeightsError("an array of Python objects: not the agent's parameters")
        read = self.read  # type: ignore[attr-defined]
        if state.get("numpy_array_alignment_bytes") is not None:  # joblib >= 0.12 pads to align
            padding = read(1)[0]
            read(padding)
        size = math.prod(shape) * dtype.itemsize
        data = read(size)
        if len(data) != size:
            raise WeightsError(f"the file ends inside an array of shape {shape}")
        array = np.frombuffer(data, dtype=dtype).copy()
        if state.get("order") == "F":
            return array.reshape(shape[::-1]).transpose()
        return array.reshape(shape)


def load_weights(path: str | Path) -> Weights:
    """The agent's parameters from ``modelParameters136500`` (see the module docstring)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise WeightsError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        loaded = _JoblibArrays(io.BytesIO(raw)).load()
    except WeightsError:
        raise
    except Exception as error:  # a truncated or foreign file: say so, whatever pickle met
        raise WeightsError(f"{path} is not a joblib list of arrays ({type(error).__name__}: {error})") from None
    if not isinstance(loaded, list) or len(loaded) != len(LAYOUT):
        raise WeightsError(f"{path} holds {type(loaded).__name__}, not the list of {len(LAYOUT)} arrays expected")
    arrays = []
    for (name, shape), array in zip(LAYOUT, loaded, strict=True):
        if not isinstance(array, np.ndarray) or array.shape != shape:
            got = getattr(array, "shape", type(array).__name__)
            raise WeightsError(f"{path}: parameter {name} has shape {got}, the agent's is {shape}")
        arrays.append(np.ascontiguousarray(array, dtype=np.float32))
    return Weights(tuple(arrays), hashlib.sha256(raw).hexdigest())
