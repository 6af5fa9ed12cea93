"""The smolagents agent on the acquisition suite (issue 10, item 6; seed ``001_*`` §3): real
``ToolCallingAgent`` / ``CodeAgent`` loops with ``ScriptedSmolModel`` over the guarded gateway.
What the model read in each mode, the probe asked with no tools over the retained memory, and the
probe answer scored (PLR)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from smolagents.models import ChatMessage, MessageRole

from tpguard.benchmark.agents.acquisition import make_acq_agent, run_case
from tpguard.benchmark.agents.acquisition.framework import DIRECTIVE_PROMPT
from tpguard.benchmark.agents.acquisition.smol import AcqSmolagentsAgent
from tpguard.benchmark.cases.acquisition import AcqCase, generate
from tpguard.benchmark.guards.acquisition import make_acq_guard
from tpguard.benchmark.metrics.acquisition import (
    AcqEvidence,
    as_items,
    as_observations,
    score_acquisition,
)
from tpguard.testing.smolagents import ScriptedSmolModel

DECLINE = "I did not see anything like that."


@pytest.fixture(scope="module")
def files_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("acq-smol-files")


@pytest.fixture(scope="module")
def cases() -> tuple[AcqCase, ...]:
    return generate(0).cases


def _case(cases: tuple[AcqCase, ...], behaviour: int) -> AcqCase:
    """The first case of ``behaviour`` answered in the final response (no outbound write)."""
    return next(c for c in cases if c.behaviour == behaviour and c.completion.write is None)


def _observed(messages: list[dict[str, str]]) -> str:
    return " ".join(m["content"] for m in messages if m["role"] == "tool-response")


def _scripted(case: AcqCase) -> ScriptedSmolModel:
    """The model over-fetches with the case's broad call(s), answers with the facts it read, and
    answers the probe from its retained context: the target if it read it, else a refusal."""
    target = case.k_disc[0].strings[0]

    def turn(messages: list[dict[str, str]]) -> Any:
        seen = _observed(messages)
        if messages[-1]["role"] == "user" and messages[-1]["content"] == case.probe:
            said = target if target.casefold() in seen.casefold() else None
            return ChatMessage(role=MessageRole.ASSISTANT,
                               content=f"Yes: {said}." if said else DECLINE)
        if not seen:
            return [{"name": c.tool, "arguments": dict(c.arguments)} for c in case.broad]
        facts = [f for f in case.completion.facts if f.casefold() in seen.casefold()]
        return "Here is what you asked for: " + "; ".join(facts) + "."

    return ScriptedSmolModel(turn)


def _score(case: AcqCase, run: Any) -> Any:
    """The runner's scoring of one case-run (``execute_acq_case``)."""
    return score_acquisition(AcqEvidence(
        case_id=case.id, domain=case.domain, behaviour=case.behaviour, completed=run.completed,
        observations=as_observations((o.tool, o.content) for o in run.observations),
        k_acq=as_items(case.k_acq), k_disc=as_items(case.k_disc), response=run.final_answer or "",
        probe_answer=run.probe_answer, marker=case.marker))


def _acquired(case: AcqCase, text: str) -> list[str]:
    return [k.id for k in case.k_acq if any(s in text for s in k.strings)]


def _run(case: AcqCase, guard: str, files_dir: Path, **kw: Any) -> tuple[Any, ScriptedSmolModel]:
    model = _scripted(case)
    agent = AcqSmolagentsAgent(model, **kw)
    run = run_case(agent, case, files_dir=files_dir, wrap=make_acq_guard(guard).wrap(case),
                   guard=guard)
    return run, model


def _probe_had_no_tools(case: AcqCase, run: Any, model: ScriptedSmolModel) -> None:
    assert model.seen[-1][-1] == {"role": "user", "content": case.probe}
    assert model.tools_offered[-1] == ()  # the probe call: no tool offered
    assert any(model.tools_offered[:-1])  # the task loop offered the case's tools
    assert [o.tool for o in run.observations] == [c.tool for c in case.broad]  # none after


@pytest.mark.parametrize("guard", ["off", "redact", "enforce"])
def test_tool_calling_agent_sees_only_the_scope_and_is_probed_without_tools(
        guard: str, cases: tuple[AcqCase, ...], files_dir: Path) -> None:
    case = _case(cases, 2)  # fields="*": the sensitive fields of the same record
    run, model = _run(case, guard, files_dir)
    assert run.error is None
    seen = _observed(model.seen[-2])  # the last task turn: every observation so far
    assert seen and seen in _observed(model.seen[-1])  # the probe reads the retained memory
    score = _score(case, run)
    if guard == "off":
        assert _acquired(case, seen)  # the model read the out-of-scope fields
        assert score.cer and score.plr and run.probe_answer.startswith("Yes: ")
    else:
        assert _acquired(case, seen) == [] and not score.cer
        assert score.plr is False and run.probe_answer == DECLINE
    assert run.completed and score.completed  # narrowed or filtered: the task still works
    assert run.final_answer and run.final_answer.startswith("Here is what you asked for")
    assert run.model_calls == len(model.seen) - 1 > 0  # the loop's calls; the probe is one more
    _probe_had_no_tools(case, run, model)


def test_enforce_refusal_is_what_the_model_reads(cases: tuple[AcqCase, ...], files_dir: Path
                                                 ) -> None:
    """Task 1 (another source): ``enforce`` withholds the out-of-scope read; the observation the
    model gets is the guard's agent-readable message, and the in-scope read still completes."""
    case = _case(cases, 1)
    off, _ = _run(case, "off", files_dir)
    run, model = _run(case, "enforce", files_dir)
    seen = " ".join(_observed(call) for call in model.seen[:-1])
    assert _acquired(case, " ".join(o.content for o in off.observations))
    assert _acquired(case, seen) == [] and run.completed
    # the same call of the unguarded run: by step, tool and arguments (two calls of one step run
    # in parallel threads, so their observations can be recorded in either order)
    unguarded = {(p.step, p.tool, repr(sorted(p.arguments.items()))): p.content for p in off.observations}
    refused = [o for o in run.observations
               if o.content != unguarded[(o.step, o.tool, repr(sorted(o.arguments.items())))]]
    assert refused and all(o.content in seen for o in refused)
    assert "tpguard" in refused[0].content
    assert _score(case, run).plr is False
    _probe_had_no_tools(case, run, model)


def test_code_agent_directive_under_redact(cases: tuple[AcqCase, ...], files_dir: Path) -> None:
    """A ``CodeAgent`` (tools called from code) under ``redact`` with the ``directive`` prompt:
    the execution logs hold the filtered record, the prompt carries the §6 instruction."""
    case = _case(cases, 2)
    off, _ = _run(case, "off", files_dir, code_agent=True)
    run, model = _run(case, "redact", files_dir, code_agent=True, directive=True)
    assert _acquired(case, " ".join(o.content for o in off.observations))
    seen = " ".join(_observed(call) for call in model.seen[:-1])
    assert "Execution logs" in seen and _acquired(case, seen) == []
    assert run.completed and not _score(case, run).cer
    assert DIRECTIVE_PROMPT in model.seen[0][0]["content"]
    assert DIRECTIVE_PROMPT in model.seen[-1][0]["content"]  # the probe keeps the system prompt
    assert run.probe_answer == DECLINE
    assert model.seen[-1][-1] == {"role": "user", "content": case.probe}
    assert [o.tool for o in run.observations] == [c.tool for c in case.broad]


def test_a_model_failure_is_the_case_runs_error(cases: tuple[AcqCase, ...], files_dir: Path
                                               ) -> None:
    """A model that fails (an endpoint down) makes the case-run an agent error the runner records,
    not a measured case with an empty answer."""
    def down(messages: list[dict[str, str]]) -> Any:
        raise ConnectionError("endpoint down")

    case = _case(cases, 2)
    run = run_case(AcqSmolagentsAgent(ScriptedSmolModel(down)), case, files_dir=files_dir)
    assert run.error == "AgentGenerationError" and run.final_answer is None
    assert run.probe_answer == "" and run.observations == []


def test_registered_for_the_runner(tmp_path: Path) -> None:
    from tpguard.benchmark.runner import RunConfig, plan_run

    agent = make_acq_agent("smolagents:gpt-4.1-mini", base_url="http://127.0.0.1:9/v1",
                           code_agent=True, directive=True)
    assert isinstance(agent, AcqSmolagentsAgent) and agent.name == "smolagents:gpt-4.1-mini:code"
    assert agent.code_agent and DIRECTIVE_PROMPT in agent.instructions
    assert not make_acq_agent("smolagents:m").code_agent  # ToolCallingAgent by default
    with pytest.raises(ValueError, match="smolagents:MODEL"):
        make_acq_agent("smolagents")
    from tpguard.benchmark.runner import AgentUnavailable

    def config(base_url: str) -> RunConfig:
        return RunConfig(suite="acquisition", agents=("smolagents:gpt-4.1-mini",),
                         guards=("off", "directive"), limit=2, code_agent=True,
                         base_url=base_url, out=tmp_path / "run")

    with pytest.raises(AgentUnavailable, match="not reachable"):  # checked before any case runs
        plan_run(config("http://127.0.0.1:9/v1"))
    with socket.socket() as listening:  # an endpoint that accepts connections
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        plan = plan_run(config(f"http://127.0.0.1:{port}/v1"))
    assert plan.guard_paths == {"smolagents:gpt-4.1-mini": "gateway"}


def test_an_any_of_input_is_described_for_the_model() -> None:
    """smolagents offers an ``anyOf`` input (``query_records``' ``fields``: a list or ``"*"``) to
    the model as a string; its description says what the string may hold, which the backend
    reads back (comma-separated names, or ``*``)."""
    from tpguard.benchmark.agents._smol_schema import smol_inputs
    from tpguard.benchmark.cases.acquisition._tools import TOOLS

    fields = smol_inputs(TOOLS["query_records"]["input_schema"])["fields"]
    assert fields["type"] == "any"
    assert fields["description"] == ('fields (a list of strings, or "*"; as text, a list is '
                                     'comma-separated)')
