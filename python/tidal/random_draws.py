"""tidal's random draws in NumPy: the values random_normal and random_uniform
(ONNX RandomNormal[Like], RandomUniform[Like], Bernoulli) take in a compiled
executable, as docs/runtime-abi.md ("Random draws") defines them.

Draw c of an op's stream is Wellons' lowbias32 hash of c under a 64-bit key
that SplitMix64 mixes from (seed, step, stream); a uniform element i is
low + (high - low) * u(draw i), a normal element i is
mean + scale * sqrt(-2 ln(1 - u(draw 2i))) * cos(2 pi u(draw 2i + 1)), with
u(h) = (h >> 8) * 2^-24, in float64 and rounded once to the element type.
`seed` is the executable's --seed (or the node's own seed), `step` the
0-based global step, `stream` the op's number among the function's random
ops (dropout included) in program order.

Used by tests and by PyTorch references that must see the executable's
noise (image_nets.VAE)."""
import numpy as np

_M64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def stream_key(seed: int, step: int, stream: int) -> int:
    """The 64-bit key of one random op at one step."""
    k = _mix64((seed + _GAMMA) & _M64)
    k = _mix64(((k ^ step) + _GAMMA) & _M64)
    return _mix64(((k ^ stream) + _GAMMA) & _M64)


def _lowbias32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & m
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & m
    x ^= x >> np.uint64(16)
    return x


def draws(key: int, counters: np.ndarray) -> np.ndarray:
    """The 32-bit draws `counters` (uint64) of the stream `key`."""
    counters = np.asarray(counters, np.uint64)
    out = np.empty(counters.shape, np.uint64)
    blocks = counters >> np.uint64(32)
    m = np.uint64(0xFFFFFFFF)
    for block in np.unique(blocks):
        k = key if block == 0 else _mix64((key + int(block) * _GAMMA) & _M64)
        sel = blocks == block
        lo = (counters[sel] + np.uint64(k & 0xFFFFFFFF)) & m
        out[sel] = _lowbias32(_lowbias32(lo) ^ np.uint64(k >> 32))
    return out


def _unit(h: np.ndarray) -> np.ndarray:
    return (h >> np.uint64(8)).astype(np.float64) * 2.0**-24


def normal(shape, seed: int = 0, step: int = 0, stream: int = 0, mean: float = 0.0, scale: float = 1.0,
           dtype=np.float32) -> np.ndarray:
    """random_normal's values for one op at one step."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.uint64)
    key = stream_key(seed, step, stream)
    u1 = 1.0 - _unit(draws(key, 2 * i))
    u2 = _unit(draws(key, 2 * i + np.uint64(1)))
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)
    return (mean + scale * z).astype(dtype).reshape(shape)


def uniform(shape, seed: int = 0, step: int = 0, stream: int = 0, low: float = 0.0, high: float = 1.0,
            dtype=np.float32) -> np.ndarray:
    """random_uniform's values for one op at one step."""
    n = int(np.prod(shape, dtype=np.int64))
    key = stream_key(seed, step, stream)
    u = _unit(draws(key, np.arange(n, dtype=np.uint64)))
    return (low + (high - low) * u).astype(dtype).reshape(shape)
