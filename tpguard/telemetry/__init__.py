"""OpenTelemetry integration: spans per tool call, argument recording modes, file export."""

from __future__ import annotations

from .content import ArgumentRecording, ContentPolicy, render_arguments
from .jsonl import JsonlSpanExporter, span_to_dict

__all__ = [
    "ArgumentRecording",
    "ContentPolicy",
    "JsonlSpanExporter",
    "render_arguments",
    "span_to_dict",
]
