"""Span sources users have (issue 34, item 3), read into one shape: :func:`tpguard.telemetry.span_to_dict`'s.

The format is detected from the content, not the file name:

* ``jsonl`` — one span per line as :class:`~tpguard.telemetry.JsonlSpanExporter` writes it
  (``configure(jsonl=…)``, a benchmark run's ``spans.jsonl``); a folder reads every ``*.jsonl``;
* ``otlp-json`` — an OTLP/JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": […]}``): what an
  OpenTelemetry Collector's ``file`` exporter writes (one request per line) or a POST body to
  ``/v1/traces`` saved as JSON. Attribute values are ``AnyValue`` objects; ids are hex;
* ``jaeger`` — a trace downloaded from Jaeger's UI ("Download JSON" on a trace, or the query API's
  ``/api/traces`` answer): ``{"data": [{"traceID", "spans": [{"spanID", "operationName",
  "references": [{"refType": "CHILD_OF", "spanID"}], "startTime" (µs), "duration" (µs),
  "tags": [{"key", "type", "value"}], "logs": [{"timestamp", "fields": […]}], "processID"}],
  "processes": {…}}]}``. Jaeger turns an OTel list attribute into a JSON-text tag and an event
  into a log whose ``event`` field is its name; span status is the ``otel.status_code`` tag;
* ``phoenix`` — Phoenix's span export: the REST API's ``GET /v1/projects/{project}/spans`` answer
  (``{"data": [{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time" (ISO),
  "status_code", "attributes", "events"}], "next_cursor"}``), a JSON list of such spans, or one per
  line. Attributes nested by their dots are flattened back.

Anything else is refused with the formats accepted.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["FORMATS", "Source", "SourceError", "read_source"]

FORMATS = ("jsonl", "otlp-json", "jaeger", "phoenix")
_ACCEPTED = ("a spans.jsonl file or folder (tpguard's JSONL exporter), an OTLP/JSON export "
             "({\"resourceSpans\": …}), a Jaeger UI trace download ({\"data\": [{\"traceID\", "
             "\"spans\"}]}) or a Phoenix span export ({\"data\": [{\"context\", …}]})")
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK",
           "STATUS_CODE_ERROR": "ERROR"}


class SourceError(ValueError):
    """A span source that is not one of the accepted formats, or is broken inside."""


@dataclass(frozen=True)
class Source:
    spans: list[dict[str, Any]]
    format: str
    #: files of a folder that are not span exports (a folder also holds a run's other files)
    skipped: tuple[str, ...] = ()


def read_source(path: str | Path) -> Source:
    """The spans of a file or folder, whatever of :data:`FORMATS` it holds."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix in (".jsonl", ".json") and f.is_file())
        read, skipped = [], []
        for f in files:
            try:
                read.append(read_source(f))
            except SourceError:
                if f.suffix == ".jsonl":
                    raise
                skipped.append(f.name)  # (a .json beside the spans: a case, a summary)
        if not read:
            raise FileNotFoundError(f"{p}: no span file in this folder; expected {_ACCEPTED}")
        kinds = sorted({k for s in read for k in s.format.split("+")})
        return Source([x for s in read for x in s.spans], "+".join(kinds), tuple(skipped))
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such span file; expected {_ACCEPTED}")
    text = p.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return _lines(p, text)
    return _document(p, doc)


def _document(p: Path, doc: Any) -> Source:
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return Source(list(_otlp(doc)), "otlp-json")
    data = doc.get("data") if isinstance(doc, dict) else doc
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        if all("spans" in x and "traceID" in x for x in data):
            return Source([s for t in data for s in _jaeger(t)], "jaeger")
        if all("context" in x for x in data):
            return Source([_phoenix(x) for x in data], "phoenix")
        if all(_is_ours(x) for x in data):
            return Source(list(data), "jsonl")
    if isinstance(doc, dict) and _is_ours(doc):
        return Source([doc], "jsonl")
    if isinstance(data, list) and not data:
        return Source([], "empty")
    raise SourceError(f"{p}: not a span export this audit reads; expected {_ACCEPTED}")


def _is_ours(x: dict[str, Any]) -> bool:
    return "name" in x and "trace_id" in x and isinstance(x.get("attributes", {}), dict)


def _lines(p: Path, text: str) -> Source:
    spans: list[dict[str, Any]] = []
    kinds: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            raise SourceError(f"{p}:{n}: expected one JSON span per line ({_ACCEPTED})") from None
        if not isinstance(item, dict):
            raise SourceError(f"{p}:{n}: expected a JSON object per line ({_ACCEPTED})")
        if "resourceSpans" in item:
            spans += _otlp(item)
            kinds.add("otlp-json")
        elif "context" in item and "name" in item:
            spans.append(_phoenix(item))
            kinds.add("phoenix")
        elif "name" in item:
            spans.append(item)
            kinds.add("jsonl")
        else:
            raise SourceError(f"{p}:{n}: not a span ({_ACCEPTED})")
    return Source(spans, "+".join(sorted(kinds)) or "empty")


# -- OTLP/JSON ----------------------------------------------------------------------------------
def _any(v: dict[str, Any]) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "intValue" in v:
        return int(v["intValue"])  # (int64 is a JSON string in OTLP/JSON)
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "arrayValue" in v:
        return [_any(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return _kv((v["kvlistValue"] or {}).get("values", []))
    return None


def _kv(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {kv["key"]: _any(kv.get("value") or {}) for kv in items or ()}


def _hex(value: Any) -> str | None:
    """An OTLP id as hex: OTLP/JSON writes hex, protobuf's own JSON mapping base64 of the bytes."""
    if not value:
        return None
    text = str(value)
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _otlp(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for rs in doc.get("resourceSpans") or ():
        resource = _kv((rs.get("resource") or {}).get("attributes"))
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or ():
            for s in ss.get("spans") or ():
                status = s.get("status") or {}
                yield {
                    "name": s.get("name", ""), "trace_id": _hex(s.get("traceId")),
                    "span_id": _hex(s.get("spanId")), "parent_span_id": _hex(s.get("parentSpanId")),
                    "start_time_unix_nano": int(s.get("startTimeUnixNano") or 0),
                    "end_time_unix_nano": int(s.get("endTimeUnixNano") or 0),
                    "status": {"code": _STATUS.get(status.get("code", 0), "UNSET")},
                    "attributes": _kv(s.get("attributes")),
                    "events": [{"name": e.get("name", ""), "attributes": _kv(e.get("attributes"))}
                               for e in s.get("events") or ()],
                    "resource": resource,
                }


# -- Jaeger -------------------------------------------------------------------------------------
def _tag(t: dict[str, Any]) -> Any:
    v, kind = t.get("value"), t.get("type")
    if kind == "string" and isinstance(v, str) and v.startswith("[") and v.endswith("]"):
        try:  # an OTel list attribute, which Jaeger stores as its JSON text
            parsed = json.loads(v)
            if isinstance(parsed, list):
                return parsed
        except json.JSONDecodeError:
            pass
    return v


def _jaeger(trace: dict[str, Any]) -> Iterator[dict[str, Any]]:
    processes = trace.get("processes") or {}
    for s in trace.get("spans") or ():
        tags = {t["key"]: _tag(t) for t in s.get("tags") or ()}
        parent = next((r.get("spanID") for r in s.get("references") or ()
                       if r.get("refType") == "CHILD_OF"), None)
        proc = processes.get(s.get("processID")) or {}
        start_us = int(s.get("startTime") or 0)
        events = []
        for log in s.get("logs") or ():
            fields = {f["key"]: _tag(f) for f in log.get("fields") or ()}
            events.append({"name": str(fields.pop("event", "")), "attributes": fields})
        yield {
            "name": s.get("operationName", ""), "trace_id": s.get("traceID") or trace.get("traceID"),
            "span_id": s.get("spanID"), "parent_span_id": parent,
            "start_time_unix_nano": start_us * 1000,
            "end_time_unix_nano": (start_us + int(s.get("duration") or 0)) * 1000,
            "status": {"code": str(tags.get("otel.status_code") or ("ERROR" if tags.get("error") else "UNSET"))},
            "attributes": tags, "events": events,
            "resource": {"service.name": proc.get("serviceName"),
                         **{t["key"]: _tag(t) for t in proc.get("tags") or ()}},
        }


# -- Phoenix ------------------------------------------------------------------------------------
def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out


def _ns(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and value:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1_000_000_000)
    return 0


def _phoenix(s: dict[str, Any]) -> dict[str, Any]:
    ctx = s.get("context") or {}
    return {
        "name": s.get("name", ""), "trace_id": ctx.get("trace_id"), "span_id": ctx.get("span_id"),
        "parent_span_id": s.get("parent_id") or None, "start_time_unix_nano": _ns(s.get("start_time")),
        "end_time_unix_nano": _ns(s.get("end_time")),
        "status": {"code": str(s.get("status_code") or "UNSET")},
        "attributes": _flat(s.get("attributes") or {}),
        "events": [{"name": e.get("name", ""), "attributes": _flat(e.get("attributes") or {})}
                   for e in s.get("events") or ()],
        "resource": {},
    }
