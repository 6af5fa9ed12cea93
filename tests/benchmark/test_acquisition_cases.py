"""The acquisition suite: schema, determinism, counts, the ten checks (seed 001_* §3)."""

from __future__ import annotations

import json

import pytest

from tpguard.benchmark.cases.acquisition import BEHAVIOURS, COUNTS, FILE_COUNTS, Scope, generate
from tpguard.benchmark.cases.acquisition.stats import stratified
from tpguard.benchmark.cases.acquisition.validate import ACQ_CHECKS, check_acq_case


def suite():
    return generate(0)


def test_generation_is_deterministic_for_a_seed() -> None:
    fresh = generate.__wrapped__(0)  # bypass the cache: a second, independent build
    assert [c.model_dump_json() for c in fresh] == [c.model_dump_json() for c in suite()]
    other = generate.__wrapped__(1)
    assert other.cases[0].model_dump_json() != suite().cases[0].model_dump_json()


def test_counts_domains_behaviours_and_files_match_the_paper() -> None:
    s = suite()
    assert len(s) == 1182 == sum(COUNTS.values())
    assert {c.behaviour for c in s} == set(BEHAVIOURS) == set(range(1, 8))
    assert len({c.domain for c in s}) == 16
    assert {(b, d) for b in range(1, 8) for d in {c.domain for c in s}} == \
        {(c.behaviour, c.domain) for c in s}  # every domain has every behaviour
    kinds = {k: sum(c.file_kind == k for c in s) for k in FILE_COUNTS}
    assert kinds == {"docx": 119, "xlsx": 147, "pdf": 30}
    assert all(len(c.tools) == 8 for c in s)
    marked = [c for c in s if c.marker]
    assert 250 < len(marked) < 450 and all(c.marker for c in s if c.behaviour == 6)
    assert len({c.id for c in s}) == len(s)


def test_scope_is_plain_data_with_the_documented_shape() -> None:
    c = next(c for c in suite() if c.behaviour == 3)
    e = json.loads(c.scope.model_dump_json())
    assert set(e) == {"sources", "fields", "subjects", "window", "file_parts", "confidential"}
    assert e["sources"][0] == "files" and next(iter(e["file_parts"].values()))
    w = next(c for c in suite() if c.behaviour == 4).scope.window
    assert w is not None and w.start < w.end
    assert Scope.model_validate(e) == c.scope


def test_cases_cli_stats_json_is_byte_identical(tmp_path) -> None:
    from typer.testing import CliRunner

    from tpguard.cli import app

    runs = [CliRunner().invoke(app, ["bench", "cases", "acquisition", "--stats", "--json"])
            for _ in range(2)]
    assert runs[0].exit_code == 0, runs[0].output
    assert runs[0].output == runs[1].output
    data = json.loads(runs[0].output)
    assert data["cases"] == 1182 and data["domains"] == 16 and data["files"]["pdf"] == 30
    assert data["per_behaviour"]["3 file_format"] == 296


@pytest.mark.parametrize("case", stratified(generate(0), per_cell=1, domains=2),
                         ids=lambda c: c.id)
def test_the_ten_checks_pass_on_a_stratified_sample(case, tmp_path_factory) -> None:
    files = tmp_path_factory.getbasetemp() / "acq-files"
    assert check_acq_case(case, files) == []


def _problems(case, files):
    return {p.check for p in check_acq_case(case, files)}


def test_checks_bite_on_broken_cases(tmp_path) -> None:
    s = suite()
    t2 = next(c for c in s if c.behaviour == 2)
    # the broad variant made narrow: nothing measurable, the behaviour boundary not crossed
    narrow = t2.model_copy(update={"broad": t2.gold})
    assert {"one_behaviour", "measurable"} <= _problems(narrow, tmp_path)
    # a forbidden field put into E: allowed and forbidden sets overlap, the gold path leaks
    field = t2.k_acq[0].attribute
    src = t2.scope.sources[0]
    wide = t2.model_copy(update={"scope": t2.scope.model_copy(update={
        "fields": {src: (*t2.scope.fields[src], field)}})})
    assert "disjoint" in _problems(wide, tmp_path)
    # a k_acq string stated in the instruction is not a clear sensitive item
    loud = t2.model_copy(update={"instruction": t2.instruction + " " + t2.k_acq[0].strings[0]})
    assert "clear_items" in _problems(loud, tmp_path)
    # a completion fact the narrow path cannot deliver
    t4 = next(c for c in s if c.behaviour == 4)
    bad = t4.model_copy(update={"completion": t4.completion.model_copy(update={
        "facts": (*t4.completion.facts, "ZZ-0000")})})
    assert "completes" in _problems(bad, tmp_path)
    assert set(ACQ_CHECKS) >= _problems(bad, tmp_path)
    assert len(ACQ_CHECKS) == 10
