"""``tpguard.telemetry.configure``: what it exports where, the resource, and a dead collector."""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import tpguard
from tpguard import Guard, PolicyKB
from tpguard.telemetry import configure, make_resource, otlp_requested, resolve_otlp_target

# -- where spans go -----------------------------------------------------------------------------


def test_nothing_is_exported_unless_asked() -> None:
    assert resolve_otlp_target() is None
    assert not otlp_requested()
    provider = configure()
    # no OTLP and no JSONL processor were added (the SDK keeps them on its multi-processor)
    assert provider._active_span_processor._span_processors == ()
    provider.shutdown()


def test_environment_asks_for_export(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    target = resolve_otlp_target()
    assert target is not None and otlp_requested()
    assert (target.protocol, target.endpoint, target.source) == (
        "http/protobuf", None, "OTEL_EXPORTER_OTLP_ENDPOINT")  # the exporter reads the env itself
    assert target.display == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:9999/custom")
    target = resolve_otlp_target()
    assert target is not None and target.display == "http://other:9999/custom"  # verbatim
    assert resolve_otlp_target(enabled=False) is None


def test_endpoint_argument_is_a_base_url_over_http_and_verbatim_over_grpc() -> None:
    http = resolve_otlp_target("http://localhost:4318")
    assert http is not None and http.endpoint == "http://localhost:4318/v1/traces"
    full = resolve_otlp_target("http://localhost:4318/v1/traces")
    assert full is not None and full.endpoint == "http://localhost:4318/v1/traces"
    grpc = resolve_otlp_target("http://localhost:4317", "grpc")
    assert grpc is not None and grpc.endpoint == "http://localhost:4317"
    secret = resolve_otlp_target("https://user:token@collector.example:443")
    assert secret is not None and "token" not in secret.display


def test_protocol_precedence_and_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_otlp_target(enabled=True).protocol == "http/protobuf"  # type: ignore[union-attr]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    target = resolve_otlp_target(enabled=True)
    assert target is not None and target.protocol == "grpc"
    assert target.display == "http://localhost:4317"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    assert resolve_otlp_target(enabled=True).protocol == "http/protobuf"  # type: ignore[union-attr]
    assert resolve_otlp_target(enabled=True, protocol="grpc").protocol == "grpc"  # type: ignore[union-attr]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")
    with pytest.raises(ValueError, match=r"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL.*http/json"):
        resolve_otlp_target(enabled=True)


def test_jsonl_export_writes_every_span(tmp_path: Path, healthcare: PolicyKB) -> None:
    path = tmp_path / "run" / "spans.jsonl"
    provider = configure(jsonl=path)
    guard = Guard(healthcare, mode="enforce", tracer_provider=provider)
    with guard.intercept("notify_patient", {"to": "415-555-0199", "message": "Blue Shield PPO"}):
        pass
    lines = path.read_text().splitlines()  # written synchronously, before shutdown
    provider.shutdown()
    span = json.loads(lines[0])
    assert span["attributes"]["tpguard.decision"] == "block"
    assert span["resource"]["service.version"] == tpguard.__version__
    assert "415-555-0199" not in path.read_text()


def test_not_global_unless_asked() -> None:
    before = trace.get_tracer_provider()
    provider = configure()
    assert isinstance(provider, TracerProvider)
    assert trace.get_tracer_provider() is before
    provider.shutdown()


# -- the resource -------------------------------------------------------------------------------


def test_resource_service_name_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_resource().attributes["service.name"] == "tpguard"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment=ci")
    res = make_resource()
    assert res.attributes["service.name"] == "from-attrs"
    assert res.attributes["deployment.environment"] == "ci"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    assert make_resource().attributes["service.name"] == "from-env"
    res = make_resource("from-arg", run_id="r-1", attributes={"team": "care"})
    assert res.attributes["service.name"] == "from-arg"
    assert res.attributes["tpguard.run.id"] == "r-1" and res.attributes["team"] == "care"
    assert res.attributes["service.version"] == tpguard.__version__


def test_the_service_name_names_the_phoenix_project(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_resource().attributes["openinference.project.name"] == "tpguard"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "claims-agent")
    assert make_resource().attributes["openinference.project.name"] == "claims-agent"
    assert make_resource("prod").attributes["openinference.project.name"] == "prod"
    explicit = make_resource("prod", attributes={"openinference.project.name": "audit-week-49"})
    assert explicit.attributes["openinference.project.name"] == "audit-week-49"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=from-env")
    assert make_resource("prod").attributes["openinference.project.name"] == "from-env"


# -- a dead collector costs a warning, not the agent's time -------------------------------------


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def _timed_calls(guard: Guard, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        with guard.intercept("process_payment", {"payer": "Maria Gonzalez",
                                                 "note": f"call 415-555-0199 ({i})"}):
            pass
    return time.perf_counter() - start


def test_dead_collector_does_not_slow_or_break_calls(
    healthcare: PolicyKB, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Synchronous export to the same dead port makes these calls ~15x slower (measured); the
    batch processor keeps the ratio near 1."""
    # one span per batch: the exporter tries (and fails) to send while the calls are running
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "1")
    quiet = configure()
    dead = configure(endpoint=f"http://127.0.0.1:{_dead_port()}", timeout=0.5)
    baseline = Guard(healthcare, mode="enforce", tracer_provider=quiet)
    exporting = Guard(healthcare, mode="enforce", tracer_provider=dead)
    _timed_calls(baseline, 10)  # warm-up (detector build, imports)
    with caplog.at_level(logging.WARNING, logger="tpguard"):
        # best of three, interleaved, so a noisy neighbour on a shared CPU does not decide it
        without = with_dead = float("inf")
        for _ in range(3):
            without = min(without, _timed_calls(baseline, 100))
            with_dead = min(with_dead, _timed_calls(exporting, 100))
        dead.shutdown()  # drains the queue: every batch fails, none raises
    quiet.shutdown()
    ratio = with_dead / without
    print(f"100 guarded calls: {without * 1e3:.1f} ms without export, "
          f"{with_dead * 1e3:.1f} ms exporting to a dead collector (ratio {ratio:.2f})")
    assert ratio < 4.0, ratio
    warnings = [r for r in caplog.records if r.name == "tpguard" and "could not export" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "127.0.0.1" in warnings[0].getMessage()
    assert "415-555-0199" not in caplog.text
