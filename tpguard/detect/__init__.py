"""Finding private atoms in text: the bottom layer of the guard.

Normalization and look-alikes (``_normalize``, ``_confusables``), digit skeletons (``_digits``),
the key automaton (``_keys``), the fuzzy index and its gate (``_fuzzy_index``, ``_fuzzy_gate``),
the one walk over a call's arguments, a result or an exit payload and its leaf table (``_walk``,
``_leaves``, bounded by :class:`Limits`), the visible text of markup (``_markup``), the
:class:`Detector` (:mod:`.detector`: its indexes built from the atoms in ``_indexes``, the key forms
it indexes in ``_forms``), the :class:`Finding` s it reports (:mod:`.findings`) and the optional
Presidio recognizer (:mod:`.presidio`).
Nothing here knows a tool, a purpose or a mode: it imports no other tpguard layer (the atoms it
indexes are typed from :mod:`tpguard.policy` for the type checker only).
"""

from __future__ import annotations

from ._forms import is_detectable
from ._limits import Limits
from .detector import Detector
from .findings import Finding

__all__ = ["Detector", "Finding", "Limits", "is_detectable"]
