"""The exposure suite's session side (seed ``002_*`` §3–4): the target-blind requester, the
reference agents ``oracle`` and ``leaky``, and :func:`run_session` — the call the runner makes."""

from __future__ import annotations

from ._profiles import PROFILES, ExpProfile
from .agents import ExpLeakyAgent, ExpOracleAgent
from .requester import Request, Requester, RequesterView, requester_view
from .run import ExpAgent, SessionRun, completed, run_session

__all__ = ["PROFILES", "ExpAgent", "ExpLeakyAgent", "ExpOracleAgent", "ExpProfile", "Request",
           "Requester", "RequesterView", "SessionRun", "completed", "requester_view",
           "run_session"]
