"""``tpguard.telemetry.configure()``: a tracer provider that exports guard spans where you ask.

    provider = tpguard.telemetry.configure(run_id="nightly-42")     # OTLP if OTEL_* env says so
    guard = Guard("policy.yaml", mode="enforce", tracer_provider=provider)
    ...
    provider.shutdown()        # flushes queued spans; also runs at interpreter exit

Nothing is exported unless asked (``endpoint=``, ``jsonl=``, ``otlp=True`` or the standard
``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`` variables). OTLP spans go through a
``BatchSpanProcessor`` (a background thread: a tool call only enqueues its span), so a slow or dead
collector never blocks a call; a failed batch is dropped with one ``tpguard`` warning. JSONL spans
are written synchronously (``SimpleSpanProcessor``) so a run's file is complete even after a crash.

Flushing: ``provider.force_flush()`` exports everything queued now (use it before reading a
collector in tests or at the end of a benchmark case); ``provider.shutdown()`` flushes and stops
the exporters. The SDK registers ``shutdown`` at exit, but a dead collector can then hold the
process for up to the export timeout (``timeout=`` / ``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s default).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.util.types import AttributeValue

from . import _attributes as A
from . import _env
from ._otlp import WarnOnFailureExporter, make_exporter, resolve_otlp_target
from .jsonl import JsonlSpanExporter

__all__ = ["DEFAULT_SERVICE_NAME", "configure", "make_resource", "otlp_requested"]

DEFAULT_SERVICE_NAME = "tpguard"


def make_resource(
    service_name: str | None = None,
    run_id: str | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> Resource:
    """``service.name`` (argument, else ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, else
    ``"tpguard"``), ``service.version`` (tpguard's), ``tpguard.run.id`` and any extra attributes;
    ``openinference.project.name`` (the project Phoenix files the traces under) is the service
    name unless given (in ``attributes`` or ``OTEL_RESOURCE_ATTRIBUTES``)."""
    attrs: dict[str, AttributeValue] = {A.SERVICE_VERSION: A.TPGUARD_VERSION}
    attrs.update(attributes or {})
    if run_id:
        attrs[A.TPGUARD_RUN_ID] = run_id
    if service_name:
        attrs[A.SERVICE_NAME] = service_name
    elif not OTELResourceDetector().detect().attributes.get(A.SERVICE_NAME):
        attrs[A.SERVICE_NAME] = DEFAULT_SERVICE_NAME
    # Resource.create merges the env detector (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) first.
    resource = Resource.create(attrs)
    if A.OPENINFERENCE_PROJECT_NAME in resource.attributes:
        return resource
    return resource.merge(Resource({A.OPENINFERENCE_PROJECT_NAME: str(resource.attributes[A.SERVICE_NAME])}))


def configure(
    *,
    service_name: str | None = None,
    run_id: str | None = None,
    endpoint: str | None = None,
    protocol: str | None = None,
    otlp: bool | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
    jsonl: str | Path | None = None,
    processors: Iterable[SpanProcessor] = (),
    resource_attributes: Mapping[str, AttributeValue] | None = None,
    set_global: bool = False,
) -> TracerProvider:
    """A new SDK ``TracerProvider`` for guard spans; pass it as ``Guard(tracer_provider=...)``.

    * ``endpoint`` — OTLP base URL (``http://localhost:4318``); over HTTP ``/v1/traces`` is appended
      unless present. Without it the exporter reads ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``
      (verbatim) or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (HTTP appends ``/v1/traces``).
    * ``protocol`` — ``http/protobuf`` (default) or ``grpc``; else
      ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, then ``OTEL_EXPORTER_OTLP_PROTOCOL``.
    * ``otlp`` — ``None`` export iff an endpoint is configured; ``True`` always (the exporter's
      localhost default when none is); ``False`` never.
    * ``headers`` / ``timeout`` — passed to the exporter (else ``OTEL_EXPORTER_OTLP_HEADERS`` /
      ``OTEL_EXPORTER_OTLP_TIMEOUT``, read by the exporter itself).
    * ``jsonl`` — also append every span to this file (:class:`JsonlSpanExporter`).
    * ``processors`` — extra span processors (e.g. an in-memory one in tests).
    * ``set_global`` — also install it as the global tracer provider (off by default: the
      provider is passed in, never global-only).
    """
    provider = TracerProvider(resource=make_resource(service_name, run_id, resource_attributes))
    target = resolve_otlp_target(endpoint, protocol, enabled=otlp)
    if target is not None:
        exporter = make_exporter(target, headers=headers, timeout=timeout)
        provider.add_span_processor(BatchSpanProcessor(WarnOnFailureExporter(exporter, target.display)))
    if jsonl is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(jsonl)))
    for processor in processors:
        provider.add_span_processor(processor)
    if set_global:
        trace.set_tracer_provider(provider)
    return provider


def otlp_requested() -> bool:
    """Whether the environment asks for OTLP export (for CLIs deciding whether to configure)."""
    return any(os.environ.get(v, "").strip() for v in
               (_env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _env.OTEL_EXPORTER_OTLP_ENDPOINT))
