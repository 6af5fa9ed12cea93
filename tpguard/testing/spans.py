"""Capturing spans in tests, with deterministic trace and span ids and a fixed instance id."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.resources import SERVICE_INSTANCE_ID, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from ..telemetry.jsonl import span_to_dict

__all__ = ["SequentialIdGenerator", "SpanCapture", "capture_spans"]


class SequentialIdGenerator(IdGenerator):
    """Trace ids 1, 2, 3 … and span ids 1, 2, 3 … — the same run gives the same ids."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trace = itertools.count(1)
        self._span = itertools.count(1)

    def generate_trace_id(self) -> int:
        with self._lock:
            return next(self._trace)

    def generate_span_id(self) -> int:
        with self._lock:
            return next(self._span)


class SpanCapture:
    """A tracer provider whose finished spans land in memory. Pass ``capture.provider`` to a Guard.

    The resource's ``service.instance.id`` is fixed: the SDK's default is a fresh UUID4 per
    process, whose hex digits can spell any short digit string (a card suffix, say) by chance
    and make a "value nowhere in the spans" assertion fail one run in a few thousand.
    """

    INSTANCE_ID = "tpguard-span-capture"

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(id_generator=SequentialIdGenerator(),
                                       resource=Resource.create({SERVICE_INSTANCE_ID: self.INSTANCE_ID}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        return tuple(self.exporter.get_finished_spans())

    def tool_spans(self, tool: str | None = None) -> list[ReadableSpan]:
        """Finished ``execute_tool`` spans in start order (of one tool if named)."""
        out = [s for s in self.spans if s.name.startswith("execute_tool ")]
        if tool is not None:
            out = [s for s in out if s.name == f"execute_tool {tool}"]
        return sorted(out, key=lambda s: s.start_time or 0)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [span_to_dict(s) for s in self.spans]

    def dump(self) -> str:
        """Every captured span as JSON text — handy for asserting a value is nowhere in it.

        Timestamps are left out: a nanosecond clock reading can contain any short digit string
        (a card suffix, say) by chance, and is no channel a value could leak through.
        """
        import json

        spans = self.as_dicts()
        for s in spans:
            s.pop("start_time_unix_nano", None)
            s.pop("end_time_unix_nano", None)
            for e in s["events"]:
                e.pop("time_unix_nano", None)
        return json.dumps(spans, ensure_ascii=False)

    def clear(self) -> None:
        self.exporter.clear()

    def shutdown(self) -> None:
        self.provider.shutdown()


@contextmanager
def capture_spans() -> Iterator[SpanCapture]:
    cap = SpanCapture()
    try:
        yield cap
    finally:
        cap.shutdown()
