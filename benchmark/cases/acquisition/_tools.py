"""The eight-tool universe ``T`` of the acquisition suite (seed ``001_*`` §3, §4 "Setup": "all
cases use the same eight tools for data access, filesystem inspection, and outbound actions").

When a decision concerns record fields, the same data-access tool takes either the task fields or
``fields="*"`` (§3 "Task Design"); ``read_file`` takes a sheet, section or page range, or nothing
(the whole file); ``get_history`` takes an optional date range; ``query_records`` without a
``subject`` returns every subject's records. Schemas are JSON Schema, as an agent sees them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["READ_TOOLS", "TOOLS", "TOOL_NAMES", "WRITE_TOOLS"]

_STR = {"type": "string"}

TOOLS: dict[str, dict[str, Any]] = {
    "query_records": {
        "description": "Read records of one data source. `fields` is a list of field names or "
                       "\"*\" for every field; omit `subject` to get every subject's records.",
        "input_schema": {"type": "object", "properties": {
            "source": _STR, "subject": _STR,
            "fields": {"anyOf": [{"type": "array", "items": _STR}, {"const": "*"}]}},
            "required": ["source", "fields"]},
    },
    "search": {
        "description": "Full-text search over records; restrict with `source` and `subject`.",
        "input_schema": {"type": "object", "properties": {
            "query": _STR, "source": _STR, "subject": _STR}, "required": ["query"]},
    },
    "list_files": {
        "description": "List the shared files with their type and parts (sheets, sections, pages).",
        "input_schema": {"type": "object", "properties": {"folder": _STR}},
    },
    "read_file": {
        "description": "Read a DOCX, XLSX or PDF file: one `sheet` (XLSX), one `section` heading "
                       "(DOCX) or `pages` like \"2\" or \"1-2\" (PDF); nothing reads the whole file.",
        "input_schema": {"type": "object", "properties": {
            "path": _STR, "sheet": _STR, "section": _STR, "pages": _STR}, "required": ["path"]},
    },
    "get_history": {
        "description": "A subject's event history; `start`/`end` (YYYY-MM-DD) limit the dates.",
        "input_schema": {"type": "object", "properties": {
            "subject": _STR, "start": _STR, "end": _STR}, "required": ["subject"]},
    },
    "lookup_person": {
        "description": "Look up a person in the directory by name, id or role.",
        "input_schema": {"type": "object", "properties": {"query": _STR}, "required": ["query"]},
    },
    "send_message": {
        "description": "Send a message to a person (e-mail address or directory id).",
        "input_schema": {"type": "object", "properties": {
            "to": _STR, "subject": _STR, "body": _STR}, "required": ["to", "body"]},
    },
    "write_record": {
        "description": "Write one field of a subject's record in a data source.",
        "input_schema": {"type": "object", "properties": {
            "source": _STR, "subject": _STR, "field": _STR, "value": _STR},
            "required": ["source", "subject", "field", "value"]},
    },
}

TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
READ_TOOLS = frozenset({"query_records", "search", "list_files", "read_file", "get_history",
                        "lookup_person"})
WRITE_TOOLS = frozenset({"send_message", "write_record"})
