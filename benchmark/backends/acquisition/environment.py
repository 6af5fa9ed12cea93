"""The executable tools of an acquisition case over its synthetic substrate (seed ``001_*`` §4
"Setup": "each tool wraps the case's synthetic records … each tool call yields a structured
observation for Acquisition Inspection").

``AcqEnvironment(case, files_dir=...)``: ``env.call(tool, arguments) -> dict`` executes one of the
eight tools (:data:`~tpguard.benchmark.cases.acquisition.TOOLS`) and returns its observation
payload; every call — rejected ones too — and every observation is appended to
``env.observations`` and, when an :class:`~..audit.AuditLog` is given, to its SQLite ``calls``
table (``sink`` = ``read`` / ``message`` / ``record``; ``result`` = the observation). Record reads
honour ``fields`` (a list or ``"*"``) and ``subject`` (omitted = every subject); files are parsed at
run time; history honours ``start``/``end``. Cost per call: linear in the substrate rows read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...cases.acquisition import TOOLS, AcqCase
from ...cases.acquisition.files import default_files_dir, ensure_files
from .._arguments import check_schema
from ..audit import AuditLog
from ..errors import ToolError
from ._readers import read_docx, read_pdf, read_xlsx

__all__ = ["AcqEnvironment", "ObservationRecord", "observation_text"]

_SINK = {"send_message": "message", "write_record": "record"}
_KEYS = ("record_id", "subject", "name")


def observation_text(payload: Any) -> str:
    """The text form of an observation (what the agent reads and the evaluator matches)."""
    return json.dumps(payload, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class ObservationRecord:
    """One executed call: the tool, the arguments received, and what came back."""

    step: int
    tool: str
    arguments: dict[str, Any]
    ok: bool
    content: str  # the observation text (the error message when ``ok`` is False)
    refused: bool = False  # the guard withheld the call or its result (``content`` is its message)


class AcqEnvironment:
    def __init__(self, case: AcqCase, *, files_dir: Path | None = None, audit: AuditLog | None = None,
                 run_id: str = "acq", agent: str = "", guard: str = "") -> None:
        self.case, self.audit = case, audit
        self.run_id, self.agent, self.guard = run_id, agent, guard
        self.files_dir = Path(files_dir) if files_dir is not None else default_files_dir(0)
        self.observations: list[ObservationRecord] = []
        self.messages: list[dict[str, Any]] = []
        self.writes: list[dict[str, Any]] = []
        self._files: dict[str, Path] | None = None
        self._lock = threading.Lock()
        if audit is not None:
            audit.clear_case(run_id, case.id)

    # -- execution --------------------------------------------------------------------------
    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Execute one tool call; raises :class:`ToolError` (logged) for a bad call."""
        received = dict(arguments) if isinstance(arguments, Mapping) else {}
        with self._lock:
            try:
                if tool not in self.case.tools:
                    raise ToolError(f"unknown tool {tool!r} (available: {', '.join(self.case.tools)})")
                check_schema(received, TOOLS[tool]["input_schema"])
                payload = getattr(self, f"_{tool}")(received)
            except ToolError as e:
                self._log(tool, received, False, str(e), {"error": str(e)})
                raise
            self._log(tool, received, True, observation_text(payload), payload)
        return payload

    def _log(self, tool: str, args: dict[str, Any], ok: bool, text: str, result: Any) -> None:
        self.observations.append(ObservationRecord(len(self.observations) + 1, tool, args, ok, text))
        if self.audit is not None:
            self.audit.record(run_id=self.run_id, case_id=self.case.id, tool=tool,
                              sink=_SINK.get(tool, "read"), arguments=args,
                              outcome="ok" if ok else "error", result=result,
                              agent=self.agent, guard=self.guard)

    # -- records ----------------------------------------------------------------------------
    def _rows(self, source: str) -> tuple[dict[str, str], ...]:
        records = self.case.substrate.records
        if source not in records:
            raise ToolError(f"argument 'source': no such source (available: {', '.join(records)})")
        return records[source]

    @staticmethod
    def _is(row: Mapping[str, str], subject: str | None) -> bool:
        if subject is None:
            return True
        s = subject.strip().casefold()
        return s in (row.get("subject", "").casefold(), row.get("name", "").casefold())

    def _query_records(self, a: dict[str, Any]) -> dict[str, Any]:
        rows = [r for r in self._rows(a["source"]) if self._is(r, a.get("subject"))]
        fields = a["fields"]
        if isinstance(fields, str) and fields.strip() != "*":
            fields = [f.strip() for f in fields.split(",") if f.strip()]
        elif isinstance(fields, str):
            fields = "*"
        if fields != "*" and (not fields or not all(isinstance(f, str) for f in fields)):
            raise ToolError("argument 'fields': expected a list of field names or \"*\"")
        if fields != "*":
            known = {k for r in self._rows(a["source"]) for k in r}
            unknown = [f for f in fields if f not in known]
            if unknown:
                raise ToolError(f"argument 'fields': unknown field(s) {', '.join(unknown)} "
                                f"(available: {', '.join(sorted(known - set(_KEYS)))})")
            rows = [{k: v for k, v in r.items() if k in _KEYS or k in fields} for r in rows]
        return {"source": a["source"], "records": [dict(r) for r in rows]}

    def _search(self, a: dict[str, Any]) -> dict[str, Any]:
        q = str(a["query"]).strip().casefold()
        if not q:
            raise ToolError("argument 'query': expected a non-empty search text")
        sources = [a["source"]] if a.get("source") else list(self.case.substrate.records)
        hits = [{"source": s, **r} for s in sources for r in self._rows(s)
                if self._is(r, a.get("subject")) and any(q in str(v).casefold() for v in r.values())]
        return {"query": a["query"], "hits": hits}

    def _write_record(self, a: dict[str, Any]) -> dict[str, Any]:
        if not any(self._is(r, a["subject"]) for r in self._rows(a["source"])):
            raise ToolError("argument 'subject': no record of that subject in this source")
        self.writes.append(dict(a))
        return {"status": "written", "source": a["source"], "subject": a["subject"],
                "field": a["field"]}

    # -- files --------------------------------------------------------------------------------
    def _list_files(self, a: dict[str, Any]) -> dict[str, Any]:
        folder = str(a.get("folder") or "").strip("/")
        return {"files": [{"path": f.path, "type": f.kind, "title": f.title,
                           "parts": [p.name for p in f.parts]}
                          for f in self.case.substrate.files
                          if not folder or f.path.startswith(folder + "/")]}

    def _read_file(self, a: dict[str, Any]) -> dict[str, Any]:
        if self._files is None:
            self._files = ensure_files(self.case, self.files_dir)
        path = self._files.get(a["path"])
        if path is None:
            raise ToolError(f"argument 'path': no such file (available: {', '.join(self._files)})")
        kind = path.suffix.lstrip(".")
        if kind == "xlsx":
            parts: Mapping[str, Any] = read_xlsx(path, a.get("sheet"))
        elif kind == "docx":
            parts = read_docx(path, a.get("section"))
        else:
            parts = read_pdf(path, a.get("pages"))
        return {"path": a["path"], "type": kind, "parts": dict(parts)}

    # -- history, directory, outbound ---------------------------------------------------------
    def _get_history(self, a: dict[str, Any]) -> dict[str, Any]:
        start, end = a.get("start") or "0000-00-00", a.get("end") or "9999-99-99"
        events = [e.model_dump() for e in self.case.substrate.history
                  if e.subject.casefold() == str(a["subject"]).strip().casefold()
                  and start <= e.date <= end]
        return {"subject": a["subject"], "events": events}

    def _lookup_person(self, a: dict[str, Any]) -> dict[str, Any]:
        q = str(a["query"]).strip().casefold()
        return {"people": [p.model_dump() for p in self.case.substrate.directory
                           if q and any(q in x.casefold() for x in (p.id, p.name, p.role))]}

    def _send_message(self, a: dict[str, Any]) -> dict[str, Any]:
        self.messages.append(dict(a))
        return {"message_id": f"MSG-{len(self.messages):04d}", "status": "sent"}

    # -- end state ----------------------------------------------------------------------------
    def performed(self, tool: str) -> list[dict[str, Any]]:
        """The accepted outbound calls of ``tool`` (``send_message`` / ``write_record``)."""
        return list(self.messages if tool == "send_message" else self.writes)
