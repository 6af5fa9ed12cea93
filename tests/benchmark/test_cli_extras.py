"""A bare ``pip install tpguard`` has the guard, not the benchmark: every ``bench`` command and
``tpguard audit`` say which extra to install, in one line, with exit 2 — never a traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tpguard.benchmark import _extras
from tpguard.cli import app


@pytest.fixture
def without_faker(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _extras._installed
    monkeypatch.setattr(_extras, "_installed", lambda m: m != "faker" and real(m))


@pytest.mark.parametrize("argv", [["bench", "cases", "need-to-know", "--stats"],
                                  ["bench", "run", "--quick"],
                                  ["audit", "--case", "x.json", "--trajectory", "y.json"]])
def test_missing_bench_extra_is_one_line(without_faker: None, argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'tpguard[bench]'" in lines[0] and "faker" in lines[0]


def test_otlp_endpoint_without_the_otlp_extra(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    real = _extras._installed
    monkeypatch.setattr(_extras, "_installed",
                        lambda m: not m.startswith("opentelemetry.exporter") and real(m))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["bench", "run", "--quick", "-o", str(out),
                                      "--otlp-endpoint", "http://127.0.0.1:4318"])
    assert result.exit_code == 2 and "tpguard[otlp]" in result.output
    assert not out.exists()
