"""The need-to-know suite generator (ToolPrivacyBench need-to-know split, seed ``000_*`` §6.1,
Table 5; domains of Table B.12; atom types of Tables B.13–B.14; annotation protocol §6.2).

``generate(seed, n_cases)`` is deterministic for a seed: every case draws from its own
``random.Random`` and its own Faker seed (no global random state), so the same seed gives the same
JSONL byte for byte. Cases are spread round-robin over the 23 domains. Because each case is seeded
on its own, ``generate_cases(seed, indices)`` builds a few of them exactly as the whole suite
would (a 300-case run need not build 1,150), and :func:`case_index` finds a case's index from its id.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from faker import Faker

from ..schema import Case, Suite
from ._build import build_case
from ._domains_a import DOMAINS_A
from ._domains_b import DOMAINS_B
from ._template import DomainT

__all__ = ["DOMAINS", "N_CASES", "SUITE_NAME", "case_index", "generate", "generate_cases"]

SUITE_NAME = "need-to-know"
DOMAINS: tuple[DomainT, ...] = tuple(sorted(DOMAINS_A + DOMAINS_B, key=lambda d: d.key))
N_CASES = 1150  #: the suite's size
_ID = "ntk-{key}-{index:04d}"


def _case_seed(seed: int, index: int) -> int:
    return (seed * 1_000_003 + index * 7_919 + 17) % (2**31 - 1)


@lru_cache(maxsize=4)
def generate(seed: int = 0, n_cases: int = N_CASES) -> Suite:
    """The need-to-know suite: ``n_cases`` cases over the 23 domains, deterministic for ``seed``."""
    if n_cases < 1:
        raise ValueError("n_cases must be at least 1")
    return Suite(name=SUITE_NAME, cases=tuple(generate_cases(seed, range(n_cases))),
                 metadata={"seed": seed, "generator": "tpguard.benchmark.cases.need_to_know",
                           "domains": [d.label for d in DOMAINS]})


def generate_cases(seed: int, indices: Iterable[int]) -> list[Case]:
    """The cases at ``indices`` of ``generate(seed)``, in that order, built alone."""
    fk = Faker("en_US")
    return [build_case(domain_of(i), i // len(DOMAINS), _case_seed(seed, i), fk, SUITE_NAME)
            for i in indices]


def domain_of(index: int) -> DomainT:
    """The domain of the case at ``index`` (round-robin)."""
    return DOMAINS[index % len(DOMAINS)]


def case_index(case_id: str) -> int | None:
    """The index in the suite of the case ``case_id`` (``None``: not a need-to-know id)."""
    for pos, domain in enumerate(DOMAINS):
        prefix = _ID.format(key=domain.key.replace("_", "-"), index=0)[:-4]
        number = case_id[len(prefix):]
        if case_id.startswith(prefix) and len(number) >= 4 and number.isdigit():
            return int(number) * len(DOMAINS) + pos
    return None
