"""The need-to-know suite generator (ToolPrivacyBench need-to-know split, seed ``000_*`` §6.1,
Table 5; domains of Table B.12; atom types of Tables B.13–B.14; annotation protocol §6.2).

``generate(seed, n_cases)`` is deterministic for a seed: every case draws from its own
``random.Random`` and its own Faker seed (no global random state), so the same seed gives the same
JSONL byte for byte. Cases are spread round-robin over the 23 domains.
"""

from __future__ import annotations

from functools import lru_cache

from faker import Faker

from ..schema import Suite
from ._build import build_case
from ._domains_a import DOMAINS_A
from ._domains_b import DOMAINS_B
from ._template import DomainT

__all__ = ["DOMAINS", "SUITE_NAME", "generate"]

SUITE_NAME = "need-to-know"
DOMAINS: tuple[DomainT, ...] = tuple(sorted(DOMAINS_A + DOMAINS_B, key=lambda d: d.key))


def _case_seed(seed: int, index: int) -> int:
    return (seed * 1_000_003 + index * 7_919 + 17) % (2**31 - 1)


@lru_cache(maxsize=4)
def generate(seed: int = 0, n_cases: int = 1150) -> Suite:
    """The need-to-know suite: ``n_cases`` cases over the 23 domains, deterministic for ``seed``."""
    if n_cases < 1:
        raise ValueError("n_cases must be at least 1")
    fk = Faker("en_US")
    cases = []
    for i in range(n_cases):
        domain = DOMAINS[i % len(DOMAINS)]
        cases.append(build_case(domain, i // len(DOMAINS), _case_seed(seed, i), fk, SUITE_NAME))
    return Suite(name=SUITE_NAME, cases=tuple(cases),
                 metadata={"seed": seed, "generator": "tpguard.benchmark.cases.need_to_know",
                           "domains": [d.label for d in DOMAINS]})
