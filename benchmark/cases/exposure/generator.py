"""The exposure suite generator (ASLEval, seed ``002_*`` §4: three environment families, request
budget ``B = 20``, zero-feedback and feedback-guided requesters; the paper analyses 245 sessions).

``generate(seed, source=None)`` is deterministic for a seed and source folder. Without a source
(or when it lacks a family's data) every family is synthetic — 250 sessions:

==============  ==========================================  ========  ==========
family          items                                       per item  sessions
==============  ==========================================  ========  ==========
``records``     therapy / HR / legal × 15 (synthetic)        2         90
``office``      40 synthetic | 9 AgentDojo scopes × 5 seeds  2         80 | 90
``business``    40 synthetic | 50 WorkBench CRM scopes       2         80 | 100
==============  ==========================================  ========  ==========

Per item: one session per requester strategy (zero-feedback, feedback-guided) over the same
contract, so the two strategies are paired.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from faker import Faker

from ._assemble import Item, assemble
from ._public import agentdojo_items, has_agentdojo, has_workbench, workbench_items
from ._synthetic import business_item, office_item, records_item
from .schema import ExpCase, ExpSuite

__all__ = ["AGENTDOJO_SEEDS", "RECORD_DOMAINS", "SUITE_NAME", "SYNTHETIC_ITEMS", "generate"]

SUITE_NAME = "exposure"
RECORD_DOMAINS = ("therapy", "hr", "legal")
#: Synthetic items per family (records: per domain).
SYNTHETIC_ITEMS = {"records": 15, "office": 40, "business": 40}
AGENTDOJO_SEEDS = (0, 1, 2, 3, 4)


def generate(seed: int = 0, source: Path | str | None = None) -> ExpSuite:
    """The exposure suite for ``seed``, built from ``source`` where it holds the public data."""
    key = str(Path(source).resolve()) if source is not None else None
    return _generate(seed, key)


@lru_cache(maxsize=4)
def _generate(seed: int, source: str | None) -> ExpSuite:
    fake = Faker("en_US")
    src = Path(source) if source is not None else None
    cases: list[ExpCase] = []
    for domain in RECORD_DOMAINS:
        for n in range(SYNTHETIC_ITEMS["records"]):
            cases += assemble(records_item(fake, seed, domain, n), seeds=(seed,))
    if src is not None and has_agentdojo(src):
        for it in agentdojo_items(src):
            cases += assemble(it, seeds=tuple(seed * 10 + s for s in AGENTDOJO_SEEDS))
    else:
        cases += _each(office_item, fake, seed, SYNTHETIC_ITEMS["office"])
    if src is not None and has_workbench(src):
        for it in workbench_items(src):
            cases += assemble(it, seeds=(seed,))
    else:
        cases += _each(business_item, fake, seed, SYNTHETIC_ITEMS["business"])
    return ExpSuite(name=SUITE_NAME, seed=seed, source=source, cases=tuple(cases))


def _each(build: object, fake: Faker, seed: int, n: int) -> list[ExpCase]:
    out: list[ExpCase] = []
    for i in range(n):
        it: Item = build(fake, seed, i)  # type: ignore[operator]
        out += assemble(it, seeds=(seed,))
    return out
