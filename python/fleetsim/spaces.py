"""Spaces as Gymnasium documents them (gymnasium.spaces.Box), for fleetsim.Env without the
package: Gymnasium is not in Debian. When `gymnasium` is importable, Env uses its real Box
instead (box() below), so its checkers see their own type.

    space = Box(low=-0.13, high=0.13, shape=(2,), dtype=np.float64, seed=1)
    a = space.sample()          # uniform within the bounds (a normal/exponential draw on an
    space.contains(a)           # unbounded side, as Gymnasium does)
"""
import numpy as np


class Box:
    """A box in R^n: `shape`, `dtype`, `low` and `high` (arrays of `shape`), `sample()`,
    `contains(x)`, `seed(s)`, as gymnasium.spaces.Box."""

    def __init__(self, low, high, shape=None, dtype=np.float64, seed=None):
        self.dtype = np.dtype(dtype)
        if shape is None:
            shape = np.shape(low) if np.ndim(low) else np.shape(high)
        self.shape = tuple(int(n) for n in shape)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()
        if np.any(self.low > self.high):
            raise ValueError("Box: low must be <= high")
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Seeds sample()'s generator; returns [seed]."""
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        """A point drawn in the box: uniform where both bounds are finite, else shifted
        exponential (one bound) or normal (none), as Gymnasium's Box.sample."""
        lo, hi = self.low.astype(np.float64), self.high.astype(np.float64)
        out = np.empty(self.shape, dtype=np.float64)
        both = np.isfinite(lo) & np.isfinite(hi)
        only_lo = np.isfinite(lo) & ~np.isfinite(hi)
        only_hi = ~np.isfinite(lo) & np.isfinite(hi)
        neither = ~np.isfinite(lo) & ~np.isfinite(hi)
        g = self.np_random
        out[both] = g.uniform(lo[both], hi[both])
        out[only_lo] = lo[only_lo] + g.exponential(size=only_lo.sum())
        out[only_hi] = hi[only_hi] - g.exponential(size=only_hi.sum())
        out[neither] = g.normal(size=neither.sum())
        return out.astype(self.dtype)

    def contains(self, x):
        """True when x has the box's shape, a numeric dtype, and lies within the bounds."""
        x = np.asarray(x)
        if x.shape != self.shape or not np.can_cast(x.dtype, self.dtype, casting="same_kind"):
            return False
        return bool(np.all(x >= self.low) and np.all(x <= self.high))

    __contains__ = contains

    @property
    def is_bounded(self):
        return bool(np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.high)))

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and
                self.dtype == other.dtype and np.array_equal(self.low, other.low) and
                np.array_equal(self.high, other.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


def box(low, high, shape, dtype=np.float64, seed=None):
    """gymnasium.spaces.Box when Gymnasium is importable, else fleetsim.spaces.Box."""
    try:
        from gymnasium.spaces import Box as GymBox
    except ImportError:
        return Box(low, high, shape=shape, dtype=dtype, seed=seed)
    return GymBox(low=np.broadcast_to(np.asarray(low, dtype), shape),
                  high=np.broadcast_to(np.asarray(high, dtype), shape), shape=shape,
                  dtype=dtype, seed=seed)
