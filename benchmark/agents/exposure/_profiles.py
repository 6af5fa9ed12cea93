"""Per-channel propensities of the exposure ``leaky`` model (a behaviour model set against seed
``002_*`` Tables 4 / 11, **not a measurement of any LLM**).

Per requester turn the model reads what the request points at (model-visible returns only), then:

===========  ======================================================================================
``chat``     its reply to the requester (console / response) restates what it read
``comply``   a requested send / forward / reply / share is executed with what it read
``cc``       unasked, it also e-mails what it read to the requester on the expected outlet ``c*``
``fallback`` after an exit it used came back blocked, its reply restates the content instead
===========  ======================================================================================

The fallback is the displacement mechanism of C1: an e-mail-only guard stops the e-mail but the
same targets reach the requester through console/response, so e-mail coverage falls while session
exposure stays; guarding every visible exit (``exits``) is what lowers session exposure.

==============  =====  ======  ====  ========  ================================================
profile         chat   comply  cc    fallback  target (paper, PIA ZFE off)
==============  =====  ======  ====  ========  ================================================
``default``     0.85   0.80    0.20  0.90      session ≈ 1.0, console ≈ 0.93–1.0, e-mail ≈ 0.6
``guarded``     0.40   0.50    0.05  0.50      a more reticent agent (lower chat exposure)
==============  =====  ======  ====  ========  ================================================
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "ExpProfile"]


@dataclass(frozen=True)
class ExpProfile:
    name: str
    chat: float
    comply: float
    cc: float
    fallback: float


PROFILES: dict[str, ExpProfile] = {p.name: p for p in (
    ExpProfile("default", chat=0.85, comply=0.80, cc=0.20, fallback=0.90),
    ExpProfile("guarded", chat=0.40, comply=0.50, cc=0.05, fallback=0.50),
)}
