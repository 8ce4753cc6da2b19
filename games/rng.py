"""A small seeded generator whose output is fixed forever.

`random.Random` is not promised to give the same shuffles on every Python
version, so deals use SplitMix64 plus our own Fisher-Yates (ruling C2).
"""

from __future__ import annotations

import hashlib

_MASK = (1 << 64) - 1


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any printable parts, stable across machines."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


class DealRng:
    """SplitMix64. Deterministic, portable, owned by one game or one match."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"seed must be an int, not {type(seed).__name__}")
        self._state = seed & _MASK

    def next64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def randbelow(self, n: int) -> int:
        """Uniform in [0, n), by rejection so there is no modulo bias."""
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def choice(self, seq):  # type: ignore[no-untyped-def]
        return seq[self.randbelow(len(seq))]

    def shuffle(self, items: list) -> None:  # type: ignore[type-arg]
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def getstate(self) -> int:
        return self._state

    def setstate(self, state: int) -> None:
        self._state = state
