"""A case's minimum scope ``E`` as tpguard :class:`~tpguard.AcquisitionScope` s, one per data tool
of the acquisition suite's eight-tool universe (seed ``001_*`` §3; the mapping of
:mod:`tpguard.policy.scope`).

How each tool expresses ``E`` (argument → result shape of :mod:`..backends.acquisition`):

==================  =====================================  ==============================================
tool                request (narrowed before the call)     result (filtered / withheld after it)
==================  =====================================  ==============================================
``query_records``   ``source`` ∈ record sources of E,      ``{"source", "records": [{record_id, subject,
                    ``subject`` ∈ E.subjects, ``fields``   name, <fields>}]}`` — records of other
                    ⊆ E.fields[source] (``"*"`` → them)     subjects, fields outside E, marked records out
``search``          ``source``, ``subject`` as above       ``{"query", "hits": [{source, record_id, …}]}``
                                                           — hits of other sources/subjects, marked hits
                                                           out (no field restriction: ``search`` has no
                                                           ``fields`` argument and returns whole rows)
``read_file``       ``path`` ∈ E.file_parts, the part      ``{"path", "type", "parts": {name: rows}}``
                    argument of the case's file kind
                    (``sheet`` / ``section`` / ``pages``)
                    ∈ its parts (none → them)
``get_history``     ``subject`` ∈ E.subjects,              ``{"subject", "events": [{subject, date, …}]}``
                    ``start``/``end`` → E.window            — events of other subjects / outside the window
==================  =====================================  ==============================================

``list_files``, ``lookup_person`` (the directory: recipients, not subjects), ``send_message`` and
``write_record`` (outbound) have no acquisition scope. A data tool whose source is not in
``E.sources`` gets an empty allowed set, so any request to it is refused. The records' identifying
keys (``record_id``, ``subject``, ``name``) always stay: the backend returns them with any fields.
Confidentiality: ``E.confidential`` false → items carrying the suite's marker (``CONFIDENTIAL:``) are
out. Nothing here reads ``k_acq`` — the guard gets ``E``, never the answer key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpguard import AcquisitionScope, ScopeBinding

if TYPE_CHECKING:
    from ..cases.acquisition import AcqCase

__all__ = ["MARKERS", "PART_ARG", "case_scopes"]

#: The suite's confidentiality marker (``"CONFIDENTIAL: <ROLE> ONLY - …"``).
MARKERS = ("CONFIDENTIAL:",)
#: ``read_file``'s part argument per file kind.
PART_ARG = {"xlsx": "sheet", "docx": "section", "pdf": "pages"}
_NON_RECORD = frozenset({"history", "directory", "files"})
_ID_KEYS = ("name",)  # record_id and subject are the binding's structural keys


def _records(case: AcqCase) -> tuple[str, ...]:
    e = case.scope
    return tuple(dict.fromkeys([*(s for s in e.sources if s not in _NON_RECORD), *e.fields]))


def case_scopes(case: AcqCase) -> dict[str, AcquisitionScope]:
    """``{tool: AcquisitionScope}`` for the case's data tools (see the module docstring)."""
    e = case.scope
    common = {"subjects": e.subjects, "confidential": e.confidential, "markers": MARKERS}
    sources = _records(case)
    out = {
        "query_records": AcquisitionScope(
            sources=sources, **common,
            fields_by_source={s: (*e.fields.get(s, ()), *_ID_KEYS) for s in sources},
            binding=ScopeBinding(fields_arg="fields", subject_arg="subject", source_arg="source",
                                 records_key="records", record_id_key="record_id",
                                 subject_key="subject")),
        "search": AcquisitionScope(
            sources=sources, **common,
            binding=ScopeBinding(fields_arg=None, subject_arg="subject", source_arg="source",
                                 records_key="hits", record_id_key="record_id",
                                 subject_key="subject", source_key="source")),
        "get_history": AcquisitionScope(
            subjects=e.subjects if "history" in e.sources else (),
            since=e.window.start if e.window else None, until=e.window.end if e.window else None,
            confidential=e.confidential, markers=MARKERS,
            binding=ScopeBinding(fields_arg=None, subject_arg="subject", since_arg="start",
                                 until_arg="end", records_key="events", record_id_key=None,
                                 subject_key="subject", date_key="date")),
    }
    parts = tuple(dict.fromkeys(p for ps in e.file_parts.values() for p in ps))
    part_arg = PART_ARG.get(case.file_kind or "")
    out["read_file"] = AcquisitionScope(
        sources=tuple(e.file_parts), parts=parts if part_arg else None,
        confidential=e.confidential, markers=MARKERS,
        binding=ScopeBinding(fields_arg=None, source_arg="path", part_arg=part_arg,
                             record_id_key=None))
    return out
