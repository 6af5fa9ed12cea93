"""``langchain:local:…`` and ``smolagents:local:…`` agents: the real framework loops over tpguard's
loopback endpoint (``tpguard.benchmark.local``), here over a registered scripted backend that replays the
Qwen call format through the GGUF's own template — the same wiring a fetched GGUF uses
(``tests/local/test_real_model.py`` runs the real runtime when it is installed). Plus the harness's
repeated-call stop and the runner's handling of a missing model."""

from __future__ import annotations

import json
import re
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_agents_support import EnvGateway, suite_cases
from typer.testing import CliRunner

from tpguard import Guard
from tpguard.benchmark.agents import make_agent
from tpguard.benchmark.agents._repeat import REPEATED, RepeatWatch
from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.local import register_endpoint, stop_endpoint
from tpguard.benchmark.local.scripted import ScriptedBackend
from tpguard.cli import app

QWEN = (Path(__file__).parents[1] / "local" / "data" / "qwen2.5-coder-1.5b.jinja").read_text()
DONE = "All workflow steps are complete."
#: A tool result in the prompt: Qwen's tag (LangChain sends role "tool"), or the user turn smolagents
#: turns a tool response into.
_RESULT = re.compile(r"<tool_response>|<\|im_start\|>user\n(?:Call id: \S+\n)?Observation:")


def _tag(name: str, arguments: dict[str, Any]) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def _by_prompt(cases: list[Case], *, final_tool: str | None) -> Any:
    """A reply deciding from the prompt, as a model does: which case (its task is in the prompt)
    and how many tool results came back so far → the next ground-truth call, then the answer."""

    def reply(prompt: str) -> str:
        case = max((c for c in cases if c.task in prompt), key=lambda c: len(c.task))
        done = len(_RESULT.findall(prompt))
        if done < len(case.ground_truth):
            call = case.ground_truth[done]
            return _tag(call.tool, dict(call.arguments))
        return _tag(final_tool, {"answer": DONE}) if final_tool else DONE

    return reply


_SERVED: list[str] = []


@pytest.fixture(autouse=True)
def _stop_endpoints() -> Any:
    yield
    while _SERVED:
        stop_endpoint(_SERVED.pop())


def _serve(replies: list[Any]) -> str:
    name = f"scripted-{uuid.uuid4().hex[:8]}"
    register_endpoint(name, ScriptedBackend(QWEN, replies, name=name))
    _SERVED.append(name)
    return name


def _gateway(case: Case, audit: AuditLog, mode: str | None = None) -> EnvGateway:
    guard = Guard(case.policy, mode=mode) if mode else None  # type: ignore[arg-type]
    return EnvGateway(Environment(case, audit, "fw"), guard)


@pytest.mark.parametrize("framework", ["langchain", "smolagents"])
def test_a_local_agent_completes_a_case(framework: str) -> None:
    case = suite_cases()[23]
    final = "final_answer" if framework == "smolagents" else None
    name = _serve([_by_prompt([case], final_tool=final)] * (len(case.ground_truth) + 1))
    agent = make_agent(f"{framework}:local:{name}", guard_path="gateway")
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, audit, "enforce")
        result = agent.run(case, gw)
        trajectory = audit.trajectory("fw", case.id)
        assert result.error is None and result.final_answer == DONE
        assert [(c.tool, c.arguments) for c in trajectory.calls] == [
            (g.tool, dict(g.arguments)) for g in case.ground_truth]
        assert gw.env.s_task == 1.0


def test_a_local_code_agent_runs_code_the_model_wrote() -> None:
    case = suite_cases()[23]
    first = case.ground_truth[0]
    code = (f"Thought: first step.\n<code>\nr = {first.tool}(**{dict(first.arguments)!r})\n"
            "print(r)\n</code>")
    name = _serve([code, f'Thought: stop here.\n<code>\nfinal_answer("{DONE}")\n</code>'])
    agent = make_agent(f"smolagents:local:{name}", code_agent=True, guard_path="gateway")
    with AuditLog(":memory:") as audit:
        result = agent.run(case, _gateway(case, audit))
        calls = audit.trajectory("fw", case.id).calls
    assert result.error is None and result.final_answer == DONE
    assert [(c.tool, c.arguments) for c in calls] == [(first.tool, dict(first.arguments))]


@pytest.mark.parametrize(("framework", "executed"), [
    ("langchain", 2),   # the third identical turn ends the run before its call executes
    ("smolagents", 3),  # smolagents executes a step's calls before its callback runs
])
def test_the_harness_stops_a_model_that_repeats_itself(framework: str, executed: int) -> None:
    case = suite_cases()[23]
    first = case.ground_truth[0]
    name = _serve([_tag(first.tool, dict(first.arguments))] * 6)
    agent = make_agent(f"{framework}:local:{name}", guard_path="gateway")
    with AuditLog(":memory:") as audit:
        result = agent.run(case, _gateway(case, audit))
        calls = audit.trajectory("fw", case.id).calls
    assert result.error == REPEATED
    assert result.model_calls == 3
    assert len(calls) == executed
    assert [(c.tool, c.arguments) for c in calls] == [(first.tool, dict(first.arguments))] * executed


def test_repeat_watch_counts_only_identical_consecutive_turns() -> None:
    watch = RepeatWatch(limit=3)
    a, b = [("t", {"x": 1})], [("t", {"x": 2})]
    assert [watch.turn(t) for t in (a, a, b, a, a)] == [False] * 5
    assert watch.turn([]) is False  # a turn without calls resets the count
    assert [watch.turn(t) for t in (b, b, b)] == [False, False, True]
    assert watch.tripped
    other = RepeatWatch()  # the order of one turn's calls does not matter
    two = [("t", {"x": 1}), ("u", "raw")]
    assert [other.turn(t) for t in (two, two[::-1], two)] == [False, False, True]


def test_bench_run_with_a_local_agent_writes_scored_records(tmp_path: Path) -> None:
    name = _serve([_by_prompt(list(suite_cases()), final_tool="final_answer")] * 40)
    out = tmp_path / "run"
    done = CliRunner().invoke(app, [
        "bench", "run", "--agent", f"smolagents:local:{name}", "--guard", "off,enforce",
        "--limit", "2", "--out", str(out), "--bootstrap", "0", "--no-report", "--json"])
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["error"] is None for r in records)
    assert {r["agent"] for r in records} == {f"smolagents:local:{name}"}
    assert all(r["score"]["s_task"] == 1.0 for r in records)


def test_a_missing_local_model_is_an_agent_that_cannot_start(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setenv("TPGUARD_MODELS", str(tmp_path))
    with pytest.raises(ImportError, match=r"tpguard models fetch qwen2\.5-coder-1\.5b"):
        make_agent("langchain:local:qwen2.5-coder-1.5b")
    done = CliRunner().invoke(app, [
        "bench", "run", "--agent", "smolagents:local:qwen2.5-coder-1.5b", "--guard", "off",
        "--limit", "1", "--out", str(tmp_path / "run")])
    assert done.exit_code == 3
    assert "tpguard models fetch qwen2.5-coder-1.5b" in done.output


@pytest.mark.parametrize("suite", ["acquisition", "exposure"])
def test_a_local_agent_that_cannot_start_stops_every_suite_with_exit_3(
        suite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acquisition and exposure suites say it as need-to-know does: exit 3, before any case
    (the reason: the model is not fetched, or the runtime is not installed, whichever is found
    first)."""
    monkeypatch.setenv("TPGUARD_MODELS", str(tmp_path))
    missing = CliRunner().invoke(app, [
        "bench", "run", "--suite", suite, "--agent", "smolagents:local:qwen2.5-coder-1.5b",
        "--guard", "off", "--limit", "1", "--out", str(tmp_path / "run")])
    assert missing.exit_code == 3, missing.output
    assert "agent smolagents:local:qwen2.5-coder-1.5b cannot start" in missing.output
    assert ("tpguard models fetch qwen2.5-coder-1.5b" in missing.output
            or "local models need llama-cpp-python" in missing.output)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("suite", ["need-to-know", "acquisition"])
def test_a_llama_server_that_is_not_there_stops_the_run_with_exit_3(suite: str,
                                                                  tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    absent = CliRunner().invoke(app, [
        "bench", "run", "--suite", suite, "--agent", f"smolagents:local:{gguf}", "--guard", "off",
        "--limit", "1", "--llama-server", f"http://127.0.0.1:{port}",
        "--out", str(tmp_path / "run")])
    assert absent.exit_code == 3, absent.output
    assert f"127.0.0.1:{port}: cannot reach llama-server" in absent.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("framework", ["langchain", "smolagents"])
def test_a_local_agent_runs_an_acquisition_case(framework: str, tmp_path: Path) -> None:
    """``…:local:NAME`` on the acquisition suite (issue 31 item 1): the same loopback endpoint,
    the paper's six-step budget, the narrow gold path read from the prompt, then the probe
    answered with tools off."""
    from tpguard.benchmark.agents.acquisition import make_acq_agent, run_case
    from tpguard.benchmark.cases.acquisition import generate
    from tpguard.benchmark.guards.acquisition import make_acq_guard

    case = next(c for c in generate(0).cases if c.completion.write is None)
    answer = "Here is what you asked for: " + "; ".join(case.completion.facts) + "."
    probes: list[str] = []

    def reply(prompt: str) -> str:
        if case.probe in prompt.rsplit("<|im_start|>user", 1)[-1]:
            probes.append(prompt)
            return "I have nothing to add."
        done = len(_RESULT.findall(prompt))
        if done < len(case.gold):
            args = dict(case.gold[done].arguments)
            if framework == "smolagents":  # its schema offers `fields` as a string (an anyOf)
                args = {k: ", ".join(v) if isinstance(v, list) else v for k, v in args.items()}
            return _tag(case.gold[done].tool, args)
        return _tag("final_answer", {"answer": answer}) if framework == "smolagents" else answer

    name = _serve([reply] * (len(case.gold) + 2))
    agent = make_acq_agent(f"{framework}:local:{name}")
    assert agent._inner.max_steps == 6  # type: ignore[union-attr]
    run = run_case(agent, case, files_dir=tmp_path, wrap=make_acq_guard("enforce").wrap(case),
                   guard="enforce")
    assert run.error is None and run.completed
    assert [o.tool for o in run.observations] == [c.tool for c in case.gold]
    assert run.final_answer == answer and run.probe_answer == "I have nothing to add."
    assert len(probes) == 1 and "<tools>" not in probes[0]  # the probe offers no tool
