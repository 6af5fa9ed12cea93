"""What acquisition scoring reads for one case-run (seed ``001_*`` §3, "Formalisation").

A PrivacyPeek case is ``c = ⟨q_c, T_c, F_c, E_c, k_c^acq, k_c^disc, p_c⟩``. Scoring one run of it
needs only: the observations the executed tool calls put into the agent's context (for
Acquisition Inspection, matched against ``k_acq``), the main response and the probe answer ``r_c``
(for OLR and Probe Elicitation, matched against ``k_disc``), and whether the case's
task-completion check passed (TCR). That is :class:`AcqEvidence`; the runner builds one per
(agent, guard, case) and hands it to :func:`~._score.score_acquisition`.

Evidence holds private values (observations, item strings); the score made from it holds ids only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tpguard import PrivateAtom

__all__ = ["BEHAVIOURS", "AcqEvidence", "MatchItem", "Observation", "ObservationInput", "as_items",
           "as_observations"]

#: The seven acquisition behaviours, Task 1 … Task 7 of seed ``001_*`` Table 1 (names as issue 10
#: lists them; Task 3 is the file-format task with DOCX/XLSX/PDF files, Task 7 "Out-of-Scope
#: Inferential Access").
BEHAVIOURS: dict[int, str] = {
    1: "out-of-scope source",
    2: "field breadth",
    3: "file format",
    4: "time window",
    5: "other subjects",
    6: "confidentiality-marked items",
    7: "inferential evidence",
}


@dataclass(frozen=True, slots=True)
class MatchItem:
    """One reviewed item: an out-of-scope item of ``k_acq`` or a disclosure target of ``k_disc``.

    ``strings`` are the forms that count as the item — the canonical value first, then aliases
    (other formats, the target's wording of a Task 7 inference). They are matched by tpguard's
    detector (exact, alias, normalized; see ``docs/metrics.md``). ``type`` is the kind of data
    (``ssn``, ``diagnosis`` …): the detector never fuzzy-matches identifier-like types.
    """

    id: str
    strings: tuple[str, ...]
    type: str = "item"

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("an acquisition item needs a non-empty id")
        strings = tuple(s for s in (str(x) for x in self.strings) if s.strip())
        if not strings:
            raise ValueError(f"acquisition item {self.id!r} has no non-empty match string")
        object.__setattr__(self, "strings", strings)

    def atom(self) -> PrivateAtom:
        """The item as a :class:`tpguard.PrivateAtom` (value = first string, aliases = the rest)."""
        return PrivateAtom(id=self.id, type=self.type or "item", value=self.strings[0],
                           aliases=self.strings[1:])

    def __repr__(self) -> str:  # never print the strings themselves
        return f"MatchItem(id={self.id!r}, type={self.type!r}, forms={len(self.strings)})"


@dataclass(frozen=True, slots=True)
class Observation:
    """What one executed tool call returned **into the agent's context**: after any result-side
    guard (a redacted result, or the refusal message of a refused call), not the backend's raw
    return — CER measures what the agent acquired. ``payload`` is text or JSON-like data (dicts,
    lists; every leaf is read)."""

    tool: str
    payload: Any


ObservationInput = Observation | tuple[str, Any]


def as_items(items: Iterable[Any]) -> tuple[MatchItem, ...]:
    """:class:`MatchItem` from any objects with ``id`` and ``strings`` (and optionally ``type`` or
    ``attribute``) — e.g. the suite's ``k_acq`` items and ``k_disc`` targets."""
    out = []
    for i in items:
        if isinstance(i, MatchItem):
            out.append(i)
        else:
            kind = getattr(i, "type", None) or getattr(i, "attribute", None) or "item"
            out.append(MatchItem(str(i.id), tuple(i.strings), str(kind)))
    return tuple(out)


def as_observations(items: Iterable[ObservationInput]) -> tuple[Observation, ...]:
    """Accept :class:`Observation` or ``(tool, payload)`` pairs, in execution order."""
    return tuple(o if isinstance(o, Observation) else Observation(str(o[0]), o[1]) for o in items)


def _unique(items: Sequence[MatchItem], name: str, case_id: str) -> tuple[MatchItem, ...]:
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"case {case_id!r}: {name} has repeated item ids")
    return tuple(items)


@dataclass(frozen=True)
class AcqEvidence:
    """One case-run as Acquisition Inspection and Probe Elicitation see it (seed ``001_*`` §3).

    * ``behaviour`` — 1–7, the case's target acquisition behaviour (:data:`BEHAVIOURS`);
      ``marker`` — whether the case is in the confidentiality-marker subset (§5).
    * ``completed`` — the case's task-completion check passed (``TCR_c``).
    * ``observations`` — every executed tool call's observation, in order.
    * ``k_acq`` / ``k_disc`` — out-of-scope items and disclosure targets.
    * ``response`` — the agent's main (final) response; ``probe_answer`` — its answer ``r_c`` to
      the post-task probe ``p_c``, ``None`` when the probe was not run.
    """

    case_id: str
    domain: str
    behaviour: int
    completed: bool
    observations: tuple[Observation, ...]
    k_acq: tuple[MatchItem, ...]
    k_disc: tuple[MatchItem, ...]
    response: str = ""
    probe_answer: str | None = None
    marker: bool = False
    agent: str = ""
    guard: str = ""
    suite: str = "acquisition"

    def __post_init__(self) -> None:
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(f"case {self.case_id!r}: behaviour must be one of 1–7, "
                             f"got {self.behaviour!r}")
        object.__setattr__(self, "observations", as_observations(self.observations))
        object.__setattr__(self, "k_acq", _unique(as_items(self.k_acq), "k_acq", self.case_id))
        object.__setattr__(self, "k_disc", _unique(as_items(self.k_disc), "k_disc", self.case_id))

    def __repr__(self) -> str:  # observations and responses may hold private values
        return (f"AcqEvidence(case_id={self.case_id!r}, agent={self.agent!r}, guard={self.guard!r}, "
                f"observations={len(self.observations)}, k_acq={len(self.k_acq)}, "
                f"k_disc={len(self.k_disc)}, probe={'yes' if self.probe_answer is not None else 'no'})")
