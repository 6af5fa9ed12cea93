"""The acquisition suite generator (PrivacyPeek, seed ``001_*`` §3: 1,182 cases, 7 behaviours, 16
domains; Task 3 with 119 DOCX, 147 XLSX and 30 PDF files).

``generate(seed)`` is deterministic for a seed: one seeded ``random.Random`` and one seeded Faker
drawn in a fixed order, no global state. Cases per behaviour follow :data:`COUNTS` (Task 3 carries
one file per case, so its count is the paper's 296 files); domains rotate within each behaviour so
every domain gets every behaviour. A fifth of the Task 1–4 and 7 cases form the **marker subset**:
the sensitive item itself carries ``"CONFIDENTIAL: <ROLE> ONLY - …"`` (Task 6 cases are marked by
construction; Task 5 items are other people's names, where a marker has no place).

Files are *described* in the cases and laid out as real documents only when a backend first needs
them (:func:`tpguard.benchmark.backends.acquisition.ensure_files`), so generation stays fast.
"""

from __future__ import annotations

import random
from functools import lru_cache

from ._build import build_case
from ._domains import DOMAINS
from ._values import Values
from .schema import AcqCase, AcqSuite, FileKind

__all__ = ["COUNTS", "FILE_COUNTS", "MARKER_RATE", "SUITE_NAME", "generate"]

SUITE_NAME = "acquisition"
#: Cases per behaviour (Task 1 … Task 7); the sum is the paper's 1,182.
COUNTS: dict[int, int] = {1: 150, 2: 160, 3: 296, 4: 148, 5: 140, 6: 138, 7: 150}
#: Task 3 files by type (the paper's counts).
FILE_COUNTS: dict[str, int] = {"docx": 119, "xlsx": 147, "pdf": 30}
MARKER_RATE = 0.2


@lru_cache(maxsize=4)
def generate(seed: int = 0) -> AcqSuite:
    """The acquisition suite for ``seed`` (1,182 cases)."""
    rng = random.Random(f"acquisition-suite-{seed}")
    v = Values(seed)
    kinds: list[FileKind] = [k for k, n in FILE_COUNTS.items() for _ in range(n)]  # type: ignore[misc]
    rng.shuffle(kinds)
    cases: list[AcqCase] = []
    for b, n in COUNTS.items():
        for i in range(n):
            d = DOMAINS[(i + 5 * b) % len(DOMAINS)]
            marker = b in (1, 2, 3, 4, 7) and rng.random() < MARKER_RATE
            cases.append(build_case(
                f"acq-t{b}-{d.key}-{i:03d}", d, b, v, marker=marker,
                file_kind=kinds[i] if b == 3 else None, variant=i // len(DOMAINS)))
    return AcqSuite(name=SUITE_NAME, seed=seed, cases=tuple(cases))
