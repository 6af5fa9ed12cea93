"""``examples/jaeger``: the script and the README snippet deliver spans to a real OTLP receiver."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tpguard.testing.otlp_receiver import OtlpHttpReceiver

JAEGER = Path(__file__).resolve().parents[2] / "examples" / "jaeger"
REPO = JAEGER.parents[1]


def test_send_traces_script_exports_a_run(tmp_path: Path) -> None:
    with OtlpHttpReceiver() as rx:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rx.endpoint
        done = subprocess.run([sys.executable, str(JAEGER / "send_traces.py")], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        spans = rx.wait_for(6)
        payload = rx.payload()
    root = next(s for s in spans if s["parent_span_id"] is None)
    tools = sorted((s for s in spans if s["parent_span_id"] == root["span_id"]),
                   key=lambda s: s["start_time_unix_nano"])
    assert root["name"] == "invoke_agent healthcare-agent"
    assert [s["name"].removeprefix("execute_tool ") for s in tools] == [
        "register_patient", "process_payment", "notify_patient", "team_handoff", "team_handoff"]
    assert [s["attributes"]["tpguard.decision"] for s in tools] == [
        "allow", "allow", "allow", "block", "allow"]
    assert root["resource"]["service.name"] == "tpguard-example"
    assert root["resource"]["tpguard.run.id"] == root["attributes"]["tpguard.run.id"]
    for value in (b"Maria Gonzalez", b"415-555-0199", b"chest tightness", b"Blue Shield PPO"):
        assert value not in payload
    assert "withheld this call to team_handoff" in done.stdout
    assert "415-555-0199" not in done.stdout + done.stderr


def test_readme_library_snippet_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (JAEGER / "README.md").read_text()
    (snippet,) = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    with OtlpHttpReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        monkeypatch.chdir(REPO)
        exec(compile(snippet, "README.md", "exec"), {})
        spans = rx.wait_for(2)
    by_name = {s["name"]: s for s in spans}
    blocked = by_name["execute_tool notify_patient"]
    assert blocked["attributes"]["tpguard.decision"] == "block"
    assert blocked["parent_span_id"] == by_name["invoke_agent my-agent"]["span_id"]
    assert blocked["resource"]["service.name"] == "my-agent"


def test_compose_file_runs_jaeger_v2_with_otlp_ports() -> None:
    compose = yaml.safe_load((JAEGER / "docker-compose.yml").read_text())
    (service,) = compose["services"].values()
    image, _, tag = service["image"].rpartition(":")
    assert image == "cr.jaegertracing.io/jaegertracing/jaeger"
    assert re.fullmatch(r"2\.\d+\.\d+", tag)
    published = {p.rsplit(":", 1)[-1] for p in service["ports"]}
    assert published == {"16686", "4317", "4318"}
    readme = (JAEGER / "README.md").read_text()
    assert service["image"] in readme  # the docker run line names the same image
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 tpguard bench run --quick" in readme


def test_telemetry_doc_snippets_run(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = (REPO / "docs" / "telemetry.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert len(snippets) == 2
    with OtlpHttpReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        monkeypatch.chdir(REPO)
        for snippet in snippets:
            exec(compile(snippet, "docs/telemetry.md", "exec"), {})
        spans = rx.wait_for(2)
    by_name = {s["name"]: s for s in spans}
    assert by_name["execute_tool process_payment"]["attributes"]["tpguard.decision"] == "block"
    assert by_name["invoke_agent claims-agent"]["resource"]["tpguard.run.id"] == "2026-11-30-nightly"


@pytest.mark.slow
def test_bench_run_quick_delivers_execute_tool_spans(tmp_path: Path) -> None:
    """Issue #6 'done when': with OTEL_EXPORTER_OTLP_ENDPOINT at a receiver, ``tpguard bench run
    --quick`` delivers one execute_tool span per audited call, with the decision attributes, and
    no atom value appears anywhere in the received payloads (default recording)."""
    from tpguard.benchmark.cases.need_to_know import generate
    from tpguard.benchmark.runner import iter_records

    with OtlpHttpReceiver() as rx:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rx.endpoint
        done = subprocess.run(
            [sys.executable, "-c", "from tpguard.cli import main; main()", "bench", "run", "--quick",
             "--no-report"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        records = list(iter_records(tmp_path / "runs" / "need-to-know-quick" / "records.jsonl"))
        attempts = sum(len(r["attempts"]) for r in records)
        spans = rx.wait_for(attempts + len(records), timeout=60)
        payload = rx.payload()
    tool_spans = [s for s in spans if s["name"].startswith("execute_tool ")]
    assert len(tool_spans) == attempts  # one span per call the guard saw, blocked ones included
    assert len([s for s in spans if s["name"].startswith("invoke_agent ")]) == len(records)
    for s in tool_spans:
        a = s["attributes"]
        assert {"tpguard.decision", "tpguard.mode", "gen_ai.tool.name",
                "tpguard.benchmark.guard"} <= set(a)
        assert a["tpguard.arguments.mode"] == "redacted"
    assert {s["attributes"]["tpguard.decision"] for s in tool_spans} >= {"allow", "block", "redact"}
    suite = generate(0)
    ids = {r["case_id"] for r in records}
    values = {v for c in suite.cases if c.id in ids for a in c.atoms
              for v in (a.value, *a.aliases, *a.variants, *a.masked)}
    found = [v for v in values if v.encode() in payload]
    assert not found, f"{len(found)} atom values reached the collector"
