"""Environment variable names tpguard reads (all of them, in one place)."""

from __future__ import annotations

from typing import Final

#: Key for ``hash`` argument recording (keyed HMAC). Without it a random per-process key is used.
TPGUARD_HASH_KEY: Final = "TPGUARD_HASH_KEY"
#: ``none`` (default) | ``redacted`` | ``hash`` | ``raw`` — how spans record tool arguments.
TPGUARD_RECORD_ARGUMENTS: Final = "TPGUARD_RECORD_ARGUMENTS"
#: ``1``: tool spans also carry the OpenInference names (``openinference.span.kind``, ``tool.*``,
#: ``input.*``) for Phoenix-style UIs.
TPGUARD_OPENINFERENCE: Final = "TPGUARD_OPENINFERENCE"
#: Must be ``1`` for ``raw`` recording to take effect (raw values in spans are an explicit opt-in).
TPGUARD_ALLOW_RAW_ARGUMENTS: Final = "TPGUARD_ALLOW_RAW_ARGUMENTS"

#: The OpenTelemetry GenAI switch for content capture (``true``/``false``, or the newer
#: ``SPAN_ONLY``/``EVENT_ONLY``/``SPAN_AND_EVENT``/``NO_CONTENT``). Any "capture" value makes tool
#: arguments ``redacted`` when ``TPGUARD_RECORD_ARGUMENTS`` is unset — never ``raw``.
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OTEL_SERVICE_NAME: Final = "OTEL_SERVICE_NAME"
OTEL_EXPORTER_OTLP_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
OTEL_EXPORTER_OTLP_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_PROTOCOL"
OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
#: Read by the OTLP exporters themselves (``configure`` only checks whether export was asked for).
OTEL_EXPORTER_OTLP_TIMEOUT: Final = "OTEL_EXPORTER_OTLP_TIMEOUT"
OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: Final = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
#: Standard batch-processor knobs (read by ``BatchSpanProcessor``), e.g. ``OTEL_BSP_SCHEDULE_DELAY``.
OTEL_BSP_SCHEDULE_DELAY: Final = "OTEL_BSP_SCHEDULE_DELAY"
