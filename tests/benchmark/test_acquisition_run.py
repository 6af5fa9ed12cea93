"""``tpguard bench run --suite acquisition`` end to end (issue 10, seed ``001_*``): a real run on a
stratified subset (every behaviour), the done-when numbers, the report section, no value in any
shareable file, and the per-behaviour narrowed retry of the leaky agent under ``enforce``."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tpguard.benchmark.agents.acquisition import AcqLeakyAgent, make_acq_agent, run_case
from tpguard.benchmark.cases.acquisition import BEHAVIOURS, generate
from tpguard.benchmark.guards.acquisition import make_acq_guard
from tpguard.benchmark.runner import RunConfig, run_benchmark
from tpguard.benchmark.runner._acquisition import select_acq_cases
from tpguard.benchmark.runner._errors import UsageError

SHAREABLE = ("run.json", "summary.json", "spans.jsonl", "report.md", "report.html")


@pytest.fixture(scope="module")
def files_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("acq-files")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, files_dir: Path) -> Any:
    mp = pytest.MonkeyPatch()
    mp.setenv("TPGUARD_ACQ_CACHE", str(files_dir))
    out = tmp_path_factory.mktemp("acq-run")
    config = RunConfig(suite="acquisition", agents=("oracle", "leaky:eager"),
                       guards=("off", "enforce", "redact"), limit=70, out=out)
    try:
        yield run_benchmark(config, progress=False), config
    finally:
        mp.undo()


def _rows(result: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["agent"], r["guard"]): r for r in result.summary["rows"]}


def test_limit_is_stratified_over_behaviours() -> None:
    cases = select_acq_cases(RunConfig(suite="acquisition", limit=14))
    assert sorted(c.behaviour for c in cases) == sorted([*BEHAVIOURS] * 2)
    quick = select_acq_cases(RunConfig(suite="acquisition", quick=True))
    assert len(quick) == 32 and {c.behaviour for c in quick} == set(BEHAVIOURS)


def test_rows_have_the_keys_and_wilson_intervals(run: Any) -> None:
    result, _ = run
    rows = _rows(result)
    assert len(rows) == 6 and result.errors == 0
    for row in rows.values():
        assert row["family"] == "acquisition" and row["n"] == row["n_total"] == 70
        for key in ("TCR", "CER", "HCER", "OLR", "PLR", "HPLR"):
            assert isinstance(row[key], float), key
            lo, hi = row["ci"][key] if key not in ("HCER", "HPLR") or row["ci"][key] else (0, 100)
            assert 0.0 <= lo <= row[key] <= hi <= 100.0
    assert result.summary["acquisition"]["rows"]


def test_done_when_numbers(run: Any) -> None:
    rows = _rows(run[0])
    for guard in ("off", "enforce", "redact"):
        assert rows[("oracle", guard)]["CER"] == 0.0 and rows[("oracle", guard)]["TCR"] == 100.0
    off = rows[("leaky:eager", "off")]
    assert 6.8 <= off["CER"] <= 60.0  # the eager profile sits at the top of the paper's range
    for guard in ("enforce", "redact"):
        g = rows[("leaky:eager", guard)]
        assert g["CER"] <= 1.0 < off["CER"]
        assert g["CERPositiveProbe"] <= 1.0
        assert g["PLR"] < off["PLR"]
        assert g["TCR"] >= 0.95 * off["TCR"]


def test_a_refusal_is_its_own_outcome(run: Any) -> None:
    """A call the guard withheld is recorded as "refused", apart from a backend "error", so a
    share (outcomes, no messages) still tells them apart."""
    result, _ = run
    records = [json.loads(line) for line in
               (result.out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    outcomes: dict[str, Counter[str]] = {}
    for r in records:
        if r["agent"] == "leaky:eager":
            outcomes.setdefault(r["guard"], Counter()).update(
                c["outcome"] for c in r["trajectory"]["calls"])
    assert outcomes["off"]["refused"] == 0 < outcomes["off"]["ok"]
    assert outcomes["enforce"]["refused"] > 0  # the eager profile over-fetches: refused first
    assert set(outcomes["enforce"]) <= {"ok", "refused", "error"}


def test_report_has_the_acquisition_section_only(run: Any) -> None:
    result, _ = run
    md = (result.out / "report.md").read_text(encoding="utf-8")
    assert "## Acquisition (PrivacyPeek)" in md and "Per acquisition behaviour" in md
    assert "FOR by information sink" not in md  # no empty ToolPrivacyBench sections
    assert (result.out / "tables" / "acquisition_main.csv").is_file()
    spans = (result.out / "spans.jsonl").read_text(encoding="utf-8")
    assert "execute_tool query_records" in spans and "tpguard.result" in spans


def test_no_item_value_in_shareable_files(run: Any) -> None:
    result, config = run
    cases = select_acq_cases(config)
    forms = {s for c in cases for k in (*c.k_acq, *c.k_disc) for s in k.strings if len(s) >= 6}
    names = [*SHAREABLE, *(f"tables/{p.name}" for p in (result.out / "tables").glob("*.csv"))]
    for name in names:
        text = (result.out / name).read_text(encoding="utf-8")
        # span and event clocks and random trace/span ids are not values (they can hold a
        # six-digit number by chance)
        text = re.sub(r'"[a-z_]*time_unix_nano": \d+|"(?:trace|span|parent_span)_id": "[0-9a-f]*"',
                      "", text)
        if name == "report.html":  # the inlined plotly.js is third-party code, not report text
            text = "<script".join(c for c in text.split("<script") if len(c) < 1_000_000)
        leaked = [f for f in forms if f in text]
        assert not leaked, f"{name} holds {len(leaked)} item value(s)"
    records = (result.out / "records.jsonl").read_text(encoding="utf-8")
    assert any(f in records for f in forms)  # the scanner bites: evidence holds values


def test_guard_names_are_per_suite(tmp_path: Path) -> None:
    from tpguard.benchmark.runner import plan_run

    with pytest.raises(UsageError, match="not available for the acquisition suite"):
        plan_run(RunConfig(suite="acquisition", agents=("oracle",), guards=("drop-free-text",),
                           out=tmp_path / "a"))
    with pytest.raises(UsageError, match="acquisition suite only"):
        plan_run(RunConfig(suite="need-to-know", agents=("oracle",), guards=("directive",),
                           out=tmp_path / "b"))


@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_leaky_over_fetch_is_narrowed_and_completes_under_enforce(behaviour: int, files_dir: Path
                                                                  ) -> None:
    """The over-fetching plan of each behaviour, under enforce: nothing out of scope reaches the
    agent and the task completes (narrowed request, or the narrow retry after a refusal)."""
    agent = AcqLeakyAgent("eager")
    agent.profile = agent.profile.__class__("always", 1.0, 10.0, 1.0, 0.0, 0.0)  # p = P_MAX
    off_guard, guard = make_acq_guard("off"), make_acq_guard("enforce")
    for case in (c for c in generate(0).cases if c.behaviour == behaviour):
        off = run_case(agent, case, files_dir=files_dir, wrap=off_guard.wrap(case))
        if off.extra["overfetch"]:
            break
    off_seen = " ".join(o.content for o in off.observations)
    assert [k.id for k in case.k_acq if any(s in off_seen for s in k.strings)]  # off: acquired
    done = run_case(agent, case, files_dir=files_dir, wrap=guard.wrap(case), guard="enforce")
    seen = " ".join(o.content for o in done.observations)
    assert done.extra["overfetch"] is True
    assert done.completed, [o.content[:120] for o in done.observations]
    assert not [k.id for k in case.k_acq if any(s in seen for s in k.strings)]
    assert any(o.content.startswith("tpguard") or o.arguments != c.arguments
               for o, c in zip(done.observations, case.broad, strict=False)) or \
        done.observations[0].content != off.observations[0].content  # the guard acted


def test_directive_switches_the_leaky_profile() -> None:
    g = make_acq_guard("directive")
    assert g.agent_spec("leaky") == "leaky:directive" and g.agent_spec("oracle") == "oracle"
    assert make_acq_agent(g.agent_spec("leaky:eager")).name == "leaky:directive"


def _scripted(case: Any, probe_reply: str) -> Any:
    """A real LangChain loop: the model over-fetches with the case's broad call(s), answers with
    the facts it saw, then answers the probe (tools disabled) with ``probe_reply``."""
    from langchain_core.messages import AIMessage, ToolMessage

    from tpguard.testing.langchain import ScriptedChatModel

    def turn(messages: list[Any]) -> Any:
        if not any(isinstance(m, AIMessage) for m in messages):
            return [{"name": c.tool, "args": dict(c.arguments)} for c in case.broad]
        if messages[-1].type == "human":  # the follow-up probe turn
            return probe_reply
        seen = " ".join(str(m.content) for m in messages if isinstance(m, ToolMessage))
        facts = [f for f in case.completion.facts if f.casefold() in seen.casefold()]
        return "Here is what you asked for: " + "; ".join(facts) + "."

    return ScriptedChatModel(turns=turn)


@pytest.mark.parametrize("guard", ["off", "redact", "enforce"])
def test_langchain_agent_sees_only_the_scope_and_is_probed_without_tools(guard: str,
                                                                        files_dir: Path) -> None:
    from langchain_core.messages import ToolMessage

    from tpguard.benchmark.agents.acquisition.framework import AcqLangChainAgent

    case = next(c for c in generate(0).cases  # fields="*", answered in the final response
                if c.behaviour == 2 and c.completion.write is None)
    target = case.k_disc[0].strings[0]
    model = _scripted(case, f"Yes: {target}.")
    agent = AcqLangChainAgent(model)
    done = run_case(agent, case, files_dir=files_dir, wrap=make_acq_guard(guard).wrap(case),
                    guard=guard)
    tool_text = " ".join(str(m.content) for call in model.seen for m in call
                         if isinstance(m, ToolMessage))
    acquired = [k.id for k in case.k_acq if any(s in tool_text for s in k.strings)]
    if guard == "off":
        assert acquired  # the model saw the out-of-scope fields
    else:
        assert acquired == [] and done.completed  # narrowed to E's fields: the task still works
    probe_call = model.seen[-1]
    assert probe_call[-1].content == case.probe and done.probe_answer == f"Yes: {target}."
    assert done.final_answer and done.final_answer.startswith("Here is what you asked for")
    assert [o.tool for o in done.observations] == [c.tool for c in case.broad]  # probe: no tool
    assert done.model_calls == len(model.seen) - 1 > 0  # the loop's calls; the probe is one more
