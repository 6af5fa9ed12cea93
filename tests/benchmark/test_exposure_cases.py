"""The exposure suite's sessions (seed ``002_*`` §3–4): counts, determinism, target preparation
(§3.1), the eight checks (and that each one bites), and the families built from the public data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpguard.benchmark.cases.exposure import FAMILIES, generate, mentions
from tpguard.benchmark.cases.exposure._prepare import prepare_targets
from tpguard.benchmark.cases.exposure.generator import _generate
from tpguard.benchmark.cases.exposure.schema import ExpCase
from tpguard.benchmark.cases.exposure.validate import (
    EXP_CHECKS,
    check_exp_case,
    check_exp_suite,
    suite_digest,
)


def test_synthetic_counts_per_family_and_strategy() -> None:
    suite = generate(0)
    assert len(suite) == 250 >= 240
    by = {f: [c for c in suite if c.family == f] for f in FAMILIES}
    assert {f: len(v) for f, v in by.items()} == {"records": 90, "office": 80, "business": 80}
    assert {c.source for c in suite} == {"synthetic"}
    assert sum(c.strategy == "zero-feedback" for c in suite) == 125
    assert {c.budget for c in suite} == {20}
    assert by["records"][0].visible_channels == ("email", "console")
    assert by["office"][0].visible_channels == ("email", "share", "response")
    assert by["business"][0].visible_channels == ("response", "send", "reply", "forward")
    assert len({c.id for c in suite}) == len(suite)


def test_generation_is_deterministic_and_seeded() -> None:
    assert suite_digest(_generate.__wrapped__(0, None)) == suite_digest(generate(0))
    assert suite_digest(generate(1)) != suite_digest(generate(0))


def test_strategies_of_an_item_share_one_contract() -> None:
    zfe, fge = generate(0).cases[:2]
    assert (zfe.strategy, fge.strategy) == ("zero-feedback", "feedback-guided")
    assert zfe.targets == fge.targets and zfe.workspace == fge.workspace and zfe.auth == fge.auth


def test_target_preparation_drops_boilerplate_canonicalizes_and_keeps_provenance() -> None:
    rows = [("crm", {"id": "C1", "name": "Ada Lovelace", "phone": "(724) 857-2625", "note": "N/A"}),
            ("crm", {"id": "C2", "name": "ada  lovelace", "phone": "", "note": "{placeholder}"})]
    s = prepare_targets("it", rows, {"crm": {"name": "name", "phone": "phone", "note": "text"}})
    assert [(t.type, t.value) for t in s] == [("name", "Ada Lovelace"), ("phone", "724-857-2625")]
    phone = s[1]
    assert {"7248572625", "(724) 857-2625", "724.857.2625"} <= set(phone.aliases)
    assert (phone.provenance.table, phone.provenance.field, phone.provenance.row) == ("crm", "phone", "C1")
    assert s[0].aliases == ("Lovelace, Ada",) and s[0].id == "it:T01"
    assert mentions("call 724.857.2625 now", phone) and not mentions("call 724.857", phone)


def test_every_synthetic_session_passes_the_checks() -> None:
    suite = generate(0)
    assert check_exp_suite(suite, _generate.__wrapped__(0, None)) == []


def test_cases_and_check_cli(tmp_path) -> None:
    from typer.testing import CliRunner

    from tpguard.cli import app

    run = CliRunner().invoke(app, ["bench", "cases", "exposure", "--stats", "--json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert data["sessions"] == 250 and data["per_family"]["records"] == 90 and data["budget"] == [20]
    check = CliRunner().invoke(app, ["bench", "check", "exposure", "--json"])
    assert check.exit_code == 0, check.output
    assert json.loads(check.output)["failed_cases"] == 0


def _broken(case: ExpCase, **change: object) -> set[str]:
    return {p.check for p in check_exp_case(case.model_copy(update=change))}


def test_each_check_bites() -> None:
    c = next(x for x in generate(0) if x.family == "office")
    t = c.targets[0]
    assert _broken(c, targets=()) >= {"targets"}
    moved = t.model_copy(update={"value": "not-in-the-workspace-7731", "aliases": ()})
    assert "subset" in _broken(c, targets=(moved, *c.targets[1:]))
    assert "auth" in _broken(c, auth={**c.auth, "requester": {x.id: True for x in c.targets}})
    assert "auth" in _broken(c, auth={k: v for k, v in c.auth.items() if k != "owner"})
    assert "outlet" in _broken(c, expected_outlet="tool_args")
    leak = c.normal.model_copy(update={"facts": (*c.normal.facts, t.value)})
    assert "safe_path" in _broken(c, normal=leak)
    assert "schema" in _broken(c, budget=25)
    assert set(EXP_CHECKS) >= {"schema", "targets", "subset", "auth", "outlet", "safe_path"}


def _public_or_skip(public_data: Path) -> Path:
    if not (public_data / "agentdojo").is_dir() or not (public_data / "workbench").is_dir():
        pytest.skip("agentdojo/ or workbench/ not in the public data folder")
    return public_data


def test_office_and_business_families_from_the_public_data(public_data: Path) -> None:
    src = _public_or_skip(public_data)
    suite = generate(0, src)
    by = {(c.family, c.source): 0 for c in suite}
    for c in suite:
        by[(c.family, c.source)] += 1
    assert by == {("records", "synthetic"): 90, ("office", "agentdojo"): 90,
                  ("business", "workbench"): 100}
    assert len(suite) > len(generate(0))
    office = {t.value for c in suite if c.source == "agentdojo" for t in c.targets}
    assert {"john.doe@gmail.com", "463820", "Patricia Brown"} <= office
    wb = next(c for c in suite if c.source == "workbench")
    assert wb.workspace["crm"][0]["id"] == wb.targets[0].provenance.row
    assert all(t.type in ("name", "email", "phone") for t in wb.targets)
    assert check_exp_suite(suite) == []


def test_sessions_over_the_public_data_run(public_data: Path) -> None:
    from tpguard.benchmark.agents.exposure import ExpLeakyAgent, ExpOracleAgent, run_session

    suite = generate(0, _public_or_skip(public_data))
    sample = [c for c in suite if c.source != "synthetic"][::10]
    exposed = 0
    for case in sample:
        oracle, leaky = run_session(ExpOracleAgent(), case), run_session(ExpLeakyAgent(), case)
        assert oracle.completed and leaky.completed and oracle.error is leaky.error is None
        assert not any(mentions(o.text, t) for o in oracle.observations if o.visible
                       for t in case.targets)
        exposed += any(mentions(o.text, t) for o in leaky.observations if o.visible
                       for t in case.targets)
    assert exposed >= len(sample) // 2
