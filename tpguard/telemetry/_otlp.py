"""Choosing the OTLP exporter (protocol, endpoint) and keeping a dead collector harmless.

The OpenTelemetry exporters already read their endpoint, headers, timeout, compression and TLS
settings from the standard ``OTEL_EXPORTER_OTLP_*`` variables; this module passes them an endpoint
only when the caller gave one. What the SDK does *not* do outside its auto-configuration (and we
therefore add here): pick the protocol from ``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL``, decide whether
export was asked for at all, and turn a base ``endpoint=`` argument into the HTTP traces URL.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from . import _env

__all__ = ["PROTOCOLS", "OtlpProtocol", "OtlpTarget", "WarnOnFailureExporter", "make_exporter",
           "resolve_otlp_target"]

OtlpProtocol = Literal["http/protobuf", "grpc"]
PROTOCOLS: tuple[str, ...] = ("http/protobuf", "grpc")
_DEFAULT_BASE = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
_TRACES_PATH = "/v1/traces"
_log = logging.getLogger("tpguard")


@dataclass(frozen=True, slots=True)
class OtlpTarget:
    """Where spans go. ``endpoint`` is handed to the exporter (``None``: it reads the env itself);
    ``display`` is the endpoint without credentials or query, for log messages."""

    protocol: OtlpProtocol
    endpoint: str | None
    display: str
    source: str


def _protocol(protocol: str | None) -> OtlpProtocol:
    # Added logic: the SDK exporters ignore OTEL_EXPORTER_OTLP_PROTOCOL (only auto-configuration
    # reads it), so the signal-specific variable, then the generic one, pick the exporter class.
    source = "protocol="
    if protocol is None:
        for var in (_env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, _env.OTEL_EXPORTER_OTLP_PROTOCOL):
            if os.environ.get(var, "").strip():
                protocol, source = os.environ[var].strip(), var
                break
    chosen = (protocol or "http/protobuf").lower()
    if chosen not in PROTOCOLS:
        raise ValueError(f"{source} must be one of {', '.join(PROTOCOLS)} (got {protocol!r}); "
                         "http/json is not supported by the OpenTelemetry Python exporters")
    return chosen  # type: ignore[return-value]


def _display(url: str) -> str:
    parts = urlsplit(url if "//" in url else f"//{url}")
    host = parts.hostname or url
    port = f":{parts.port}" if parts.port else ""
    scheme = f"{parts.scheme}://" if parts.scheme else ""
    return f"{scheme}{host}{port}{parts.path}"


def resolve_otlp_target(
    endpoint: str | None = None, protocol: str | None = None, *, enabled: bool | None = None
) -> OtlpTarget | None:
    """The OTLP target asked for, or ``None`` when nothing asked for export.

    Export is asked for by ``endpoint=``, by ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_ENDPOINT``, or by ``enabled=True`` (the exporter's default
    ``localhost`` endpoint); ``enabled=False`` turns export off whatever the environment says.
    ``endpoint=`` is a base URL like ``OTEL_EXPORTER_OTLP_ENDPOINT``: over HTTP ``/v1/traces`` is
    appended unless the URL already ends with it; over gRPC it is used as given.
    """
    if enabled is False:
        return None
    proto = _protocol(protocol)
    if endpoint:
        url = endpoint
        if proto == "http/protobuf" and not endpoint.rstrip("/").endswith(_TRACES_PATH):
            url = endpoint.rstrip("/") + _TRACES_PATH  # added logic: same rule as the base env var
        return OtlpTarget(proto, url, _display(url), "endpoint=")
    for var in (_env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _env.OTEL_EXPORTER_OTLP_ENDPOINT):
        value = os.environ.get(var, "").strip()
        if value:
            shown = value
            if proto == "http/protobuf" and var == _env.OTEL_EXPORTER_OTLP_ENDPOINT:
                shown = value.rstrip("/") + _TRACES_PATH
            return OtlpTarget(proto, None, _display(shown), var)
    if enabled:
        base = _DEFAULT_BASE[proto]
        shown = base + _TRACES_PATH if proto == "http/protobuf" else base
        return OtlpTarget(proto, None, _display(shown), "default")
    return None


def make_exporter(
    target: OtlpTarget, *, headers: Mapping[str, str] | None = None, timeout: float | None = None
) -> SpanExporter:
    """The OpenTelemetry OTLP span exporter for ``target`` (needs the ``otlp`` extra)."""
    try:
        if target.protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )

            return GrpcExporter(endpoint=target.endpoint, headers=dict(headers) if headers else None,
                                timeout=timeout)
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        return HttpExporter(endpoint=target.endpoint, headers=headers, timeout=timeout)
    except ImportError as e:
        raise ImportError(f"OTLP export over {target.protocol} needs the OpenTelemetry OTLP "
                          "exporter: pip install 'tpguard[otlp]'") from e


class WarnOnFailureExporter(SpanExporter):
    """Wraps an exporter so a failing collector costs one ``tpguard`` warning, never an exception.

    The first failed batch of a failure streak is logged (with the endpoint, not the spans);
    further ones are counted in ``dropped_spans`` until an export succeeds again.
    """

    def __init__(self, inner: SpanExporter, where: str) -> None:
        self.inner = inner
        self.where = where
        self.failed_batches = 0
        self.dropped_spans = 0
        self._failing = False
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        reason = "the collector did not accept them"
        try:
            result = self.inner.export(spans)
        except Exception as e:  # an exporter bug must not reach the batch thread's log as a trace
            result, reason = SpanExportResult.FAILURE, type(e).__qualname__
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                recovered, self._failing = self._failing, False
                if recovered:
                    _log.warning("tpguard: span export to %s recovered (%d span(s) dropped so far)",
                                 self.where, self.dropped_spans)
                return result
            first = not self._failing
            self._failing = True
            self.failed_batches += 1
            self.dropped_spans += len(spans)
        if first:
            _log.warning("tpguard: could not export %d span(s) to %s (%s); they are dropped and the "
                         "agent carries on. Further failures are counted until export recovers.",
                         len(spans), self.where, reason)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
