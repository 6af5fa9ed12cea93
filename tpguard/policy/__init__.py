"""What the policy says: the knowledge base and everything that reads or checks it.

Private atoms, tools and their purposes, authorizations and rules (:mod:`.kb`), acquisition scopes
(:mod:`.scope`), recipients and disclosures (:mod:`.exposure`), the consistency checks of a whole
knowledge base (``_rules``) and the strict YAML/JSON policy file loader (``_file``, ``_yaml``).
This layer sits on :mod:`tpguard.detect` (a value the policy names must be one the detector can
find) and below everything that decides.
"""

from __future__ import annotations

# the knowledge base's public names are the package's (``tpguard.policy.PolicyKB``, …)
from . import kb
from .kb import *  # noqa: F403
from .kb import AccessResolver  # not in kb.__all__; the benchmark imports it from here

__all__ = [*kb.__all__, "AccessResolver"]
