"""tpguard — purpose-bound privacy for tool-using LLM agents.

Each private fact of a task (a private *atom*) may reach only the tools whose purpose needs it.
The public API::

    from tpguard import PrivateAtom, ToolSpec, PolicyKB      # policy knowledge base
    from tpguard import Detector, Finding                      # detection
    from tpguard import Guard, Decision, GuardViolation        # decisions and modes
    from tpguard import Limits                                 # what the guard reads, at most
    from tpguard import AcquisitionScope, ScopeBinding         # what a tool may return (acquisition)
    from tpguard import Recipient, Disclosure, ExitBinding     # who may receive what (exposure)
    from tpguard import purpose_bound                          # decorator for tools and callables
"""

from __future__ import annotations

from .decorator import purpose_bound
from .detect import Detector, Finding, Limits
from .errors import GuardViolation, PolicyError
from .guard import Decision, Guard
from .policy import Authorization, PolicyKB, PrivateAtom, Rule, ToolSpec
from .policy.exposure import Disclosure, ExitBinding, Recipient
from .policy.scope import AcquisitionScope, ScopeBinding, ScopeFinding
from .telemetry._attributes import TPGUARD_VERSION as __version__

__all__ = [
    "AcquisitionScope",
    "Authorization",
    "Decision",
    "Detector",
    "Disclosure",
    "ExitBinding",
    "Finding",
    "Guard",
    "GuardViolation",
    "Limits",
    "PolicyError",
    "PolicyKB",
    "PrivateAtom",
    "Recipient",
    "Rule",
    "ScopeBinding",
    "ScopeFinding",
    "ToolSpec",
    "__version__",
    "purpose_bound",
]
