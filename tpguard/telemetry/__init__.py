"""OpenTelemetry integration: spans per tool call, argument recording modes, export (OTLP, JSONL)."""

from __future__ import annotations

from ._configure import configure, make_resource, otlp_requested
from ._otlp import OtlpTarget, resolve_otlp_target
from ._runspan import agent_run_span
from .content import ArgumentRecording, ContentPolicy, render_arguments
from .jsonl import JsonlSpanExporter, span_to_dict

__all__ = [
    "ArgumentRecording",
    "ContentPolicy",
    "JsonlSpanExporter",
    "OtlpTarget",
    "agent_run_span",
    "configure",
    "make_resource",
    "otlp_requested",
    "render_arguments",
    "resolve_otlp_target",
    "span_to_dict",
]
