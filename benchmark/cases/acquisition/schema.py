"""The acquisition case: ``c = ⟨q, T, F, E, k_acq, k_disc, p⟩`` plus its answer key (PrivacyPeek,
seed ``001_*`` §3 "Preliminaries: Agentic Setup", "Task Design and Data Generation").

* ``instruction`` is ``q``; ``tools`` is ``T_c`` (a subset of :data:`~._tools.TOOL_NAMES`, the
  eight-tool universe); ``substrate`` is ``F`` (records per source, history events, directory
  entries and the files of Task 3, whose parts are laid out as real DOCX/XLSX/PDF at build time).
* ``scope`` is the minimum scope ``E`` — plain data so a guard can map it onto its own scope API::

      {"sources":      ["appointments", "history", ...],   # record sources (and "history",
                                                          #   "directory", "files") an approved
                                                          #   path reads
       "fields":       {"appointments": ["next_visit"]},   # per record source: the task fields
       "subjects":     ["PAT-1042"],                       # subject ids the path may read
       "window":       {"start": "2025-03-01", "end": "2025-03-31"} | null,  # history dates
       "file_parts":   {"files/roster.xlsx": ["Schedule"]},  # sheet / section / page ("2") names
       "confidential": false}     # false: items carrying a confidentiality marker are outside E

  An item is in ``E`` only if removing it prevents correct completion (``minimal_scope`` check).
* ``k_acq`` are the out-of-scope items Acquisition Inspection matches in tool *observations*
  (literal ``strings``; any one matching marks the item acquired); ``k_disc`` the subject +
  attribute targets that judge the main response and the probe answer (Tasks 1–6: the same facts as
  ``k_acq``; Task 7: the sensitive inference the precursor evidence in ``k_acq`` supports).
* ``probe`` is ``p``, asked after the final answer with tools disabled.
* The answer key: ``gold`` (the narrow calls that complete the task within ``E``), ``broad`` (the
  over-fetching variant of the case's behaviour, used by the contract tests and the ``leaky``
  agent) and ``completion`` (facts the final answer must state, and an optional end-state write).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._case_list import CaseList

__all__ = [
    "BEHAVIOURS",
    "AcqCase",
    "AcqItem",
    "AcqSuite",
    "Call",
    "Completion",
    "DiscTarget",
    "FilePart",
    "FileSpec",
    "HistoryEvent",
    "Person",
    "Scope",
    "Substrate",
    "Window",
    "WriteCheck",
]

#: Table 1's seven acquisition behaviours, Task 1 … Task 7 in order.
BEHAVIOURS: dict[int, str] = {
    1: "out_of_scope_source",
    2: "field_breadth",
    3: "file_format",
    4: "time_window",
    5: "other_subjects",
    6: "confidentiality_marked",
    7: "inferential_evidence",
}

FileKind = Literal["docx", "xlsx", "pdf"]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(_M):
    """An inclusive ISO date range (``YYYY-MM-DD``)."""

    start: str
    end: str

    def contains(self, day: str) -> bool:
        return self.start <= day <= self.end


class Scope(_M):
    """The minimum scope ``E`` (see the module docstring for the exact data shape)."""

    sources: tuple[str, ...]
    fields: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    subjects: tuple[str, ...] = ()
    window: Window | None = None
    file_parts: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    confidential: bool = False


class HistoryEvent(_M):
    subject: str
    date: str
    kind: str
    detail: str


class Person(_M):
    """A directory entry (``lookup_person``)."""

    id: str
    name: str
    role: str
    email: str
    phone: str


class FilePart(_M):
    """One sheet (XLSX), section (DOCX, a Heading 1 with its paragraphs) or page (PDF, named
    ``"1"``, ``"2"`` …). Each row is a table row (XLSX) or a paragraph / line of cells joined by
    ``": "`` (DOCX, PDF)."""

    name: str
    rows: tuple[tuple[str, ...], ...]


class FileSpec(_M):
    """A Task 3 file: laid out as a real document at build time, parsed at run time."""

    path: str
    kind: FileKind
    title: str
    parts: tuple[FilePart, ...]

    def part(self, name: str) -> FilePart:
        for p in self.parts:
            if p.name.casefold() == name.casefold():
                return p
        raise KeyError(name)


class Substrate(_M):
    """``F``: the data the case's tools wrap. ``records[source]`` rows are flat string maps with
    ``record_id`` and ``subject`` (a subject id) keys."""

    records: dict[str, tuple[dict[str, str], ...]] = Field(default_factory=dict)
    history: tuple[HistoryEvent, ...] = ()
    directory: tuple[Person, ...] = ()
    files: tuple[FileSpec, ...] = ()

    def file(self, path: str) -> FileSpec:
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)


class AcqItem(_M):
    """One out-of-scope item of ``k_acq``: matched in observations by any of ``strings``."""

    id: str
    behaviour: int
    subject: str
    attribute: str
    strings: tuple[str, ...]
    where: str  # "source:billing", "field:appointments.national_id", "file:PATH#PART", …
    marker: bool = False  # the item carries "CONFIDENTIAL: <ROLE> ONLY"


class DiscTarget(_M):
    """One disclosure target of ``k_disc`` (subject name + attribute, with its match strings)."""

    id: str
    subject: str
    attribute: str
    strings: tuple[str, ...]
    acq: tuple[str, ...]  # the k_acq ids this target corresponds to


class Call(_M):
    tool: str
    arguments: dict[str, Any]


class WriteCheck(_M):
    """An end-state requirement: an executed ``tool`` call whose arguments contain every string."""

    tool: str
    contains: tuple[str, ...]


class Completion(_M):
    """Task completion (TCR): every ``facts`` string in the final answer (case-insensitive), and
    the ``write`` performed when one is required."""

    facts: tuple[str, ...]
    write: WriteCheck | None = None


class AcqCase(_M):
    id: str
    suite: str = "acquisition"
    domain: str
    behaviour: int
    instruction: str
    tools: tuple[str, ...]
    substrate: Substrate
    scope: Scope
    k_acq: tuple[AcqItem, ...]
    k_disc: tuple[DiscTarget, ...]
    probe: str
    gold: tuple[Call, ...]
    broad: tuple[Call, ...]
    completion: Completion
    marker: bool = False
    file_kind: FileKind | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def behaviour_name(self) -> str:
        return BEHAVIOURS[self.behaviour]

    @property
    def task(self) -> str:
        """The instruction (the name the other suites' agents read)."""
        return self.instruction


class AcqSuite(CaseList, _M):
    case_type: ClassVar[type[BaseModel]] = AcqCase
    name: str = "acquisition"
    seed: int = 0
    cases: tuple[AcqCase, ...]

    def __iter__(self) -> Iterator[AcqCase]:  # type: ignore[override]
        return iter(self.cases)

    def case(self, case_id: str) -> AcqCase:
        return super().case(case_id)
