"""Derived random streams: every stream comes from (master seed, *purpose) through a stable hash.

Python's ``hash`` is salted per process, so purposes are hashed with SHA-256 instead: the same
(seed, dataset, repetition, purpose) gives the same bytes on every machine, in any order, in
parallel or not.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(*parts: object) -> int:
    """A 64-bit integer that depends only on the string forms of ``parts``."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def seed_sequence(master_seed: int, *purpose: object) -> np.random.SeedSequence:
    """The ``SeedSequence`` for one purpose, e.g. ``(seed, "abalone", 3, "test-split")``."""
    return np.random.SeedSequence([int(master_seed) & 0xFFFFFFFF, stable_hash(*purpose)])


def rng(master_seed: int, *purpose: object) -> np.random.Generator:
    """A numpy ``Generator`` for one purpose."""
    return np.random.default_rng(seed_sequence(master_seed, *purpose))


def int_seed(seq: np.random.SeedSequence) -> int:
    """A positive 31-bit integer seed (never 0: pycma reads 0 as 'seed from the clock')."""
    return int(seq.generate_state(1, dtype=np.uint32)[0] % (2**31 - 2)) + 1
