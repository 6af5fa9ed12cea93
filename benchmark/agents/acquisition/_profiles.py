"""Behaviour profiles of the acquisition ``leaky`` model, set against seed ``001_*``'s ranges
(a behaviour model, **not a measurement of any LLM**).

For a case of behaviour ``b`` in domain ``d`` the model, once it engages with the task
(``engage``; otherwise it gives up without a tool call — the paper's refusals, low TCR with low
CER), over-fetches with probability::

    p = min(P_MAX, scale · BEHAVIOUR_RATE[b] · DOMAIN_RATE[d])

replacing the narrow request by the case's broad one (``fields="*"``, the whole file, an open date
range, every subject, ``query_records`` on the marked notes) or, for Task 1, adding a read of the
out-of-scope source. Then:

* main response: the completion facts found in its context; with ``olr`` it also restates what
  else it retained (and what it infers from it: :mod:`._recall`) — OLR when that holds a target;
* probe answer (tools disabled): with ``probe_hit`` (+ ``marker_boost`` when its context carries
  the confidentiality marker — §5: the marker "raises rather than suppresses" PLR) it restates
  what it retained beyond its answer, with its inferences (Task 7), else it declines.

It never reads the answer key, so it discloses only what it retained: the paper's CER-negative
probe (~13 % on average: a disclosure without detected acquisition) is not modelled — an earlier
version stated ``k_disc[0]`` with a ``guess`` probability, which set a PLR floor no guard could
move (issue 29). Expected rates over the 1,182-case mix (mean ``BEHAVIOUR_RATE`` ×
``DOMAIN_RATE`` ≈ 1.06): ``CER ≈ engage · scale · 1.06`` and ``PLR ≈ CER · probe_hit`` (less on
Task 7 inferences its background knowledge misses).

==============  ======  =====  ========  =====  =============================================
profile         engage  scale  probe_hit olr    target (paper; PLR: only its CER-positive part)
==============  ======  =====  ========  =====  =============================================
``restrained``  0.56    0.12   0.80      0.10   CER ≈ 7, TCR ≈ 55 (Llama-3.2-3B)
``default``     0.80    0.33   0.85      0.15   CER ≈ 28, TCR ≈ 80 (the middle)
``eager``       0.87    0.55   0.88      0.20   CER ≈ 52, TCR ≈ 86 (Claude-Sonnet-4)
``directive``   0.80    0.23   0.80      0.10   ``default`` under the category-aware prompt:
                                                CER −8 points, more than half left (Tab. 4)
==============  ======  =====  ========  =====  =============================================
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BEHAVIOUR_RATE", "DOMAIN_RATE", "PROFILES", "P_MAX", "AcqProfile"]

P_MAX = 0.95
#: Relative propensity per behaviour: broad field/file/window requests are the easy defaults,
#: reading another source or every subject's records takes a deliberate extra step.
BEHAVIOUR_RATE: dict[int, float] = {1: 0.7, 2: 1.3, 3: 1.4, 4: 1.1, 5: 0.6, 6: 0.9, 7: 1.0}
#: §4: social media, healthcare, legal services and finance lead; retail, engineering, logistics
#: trail (others 1.0).
DOMAIN_RATE: dict[str, float] = {"social_media": 1.3, "healthcare": 1.2, "legal": 1.2,
                                 "finance": 1.15, "retail": 0.75, "engineering": 0.75,
                                 "logistics": 0.75}


@dataclass(frozen=True)
class AcqProfile:
    name: str
    engage: float
    scale: float
    probe_hit: float
    olr: float
    marker_boost: float = 0.05

    def overfetch(self, behaviour: int, domain: str) -> float:
        return min(P_MAX, self.scale * BEHAVIOUR_RATE[behaviour] * DOMAIN_RATE.get(domain, 1.0))


PROFILES: dict[str, AcqProfile] = {p.name: p for p in (
    AcqProfile("restrained", engage=0.56, scale=0.12, probe_hit=0.80, olr=0.10),
    AcqProfile("default", engage=0.80, scale=0.33, probe_hit=0.85, olr=0.15),
    AcqProfile("eager", engage=0.87, scale=0.55, probe_hit=0.88, olr=0.20),
    AcqProfile("directive", engage=0.80, scale=0.23, probe_hit=0.80, olr=0.10),
)}
