"""Framework agents on the acquisition suite get the paper's six-step action budget by default
(seed ``001_*``, appendix: "six step action budget"; issue 29 item 5): a model that never stops
calling tools is cut off after six tool calls, under smolagents and LangChain alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from tpguard.benchmark.agents.acquisition import run_case
from tpguard.benchmark.agents.acquisition.framework import AcqLangChainAgent
from tpguard.benchmark.agents.acquisition.smol import AcqSmolagentsAgent
from tpguard.benchmark.cases.acquisition import AcqCase, generate
from tpguard.testing.langchain import ScriptedChatModel
from tpguard.testing.smolagents import ScriptedSmolModel

BUDGET = 6


@pytest.fixture(scope="module")
def case() -> AcqCase:
    return next(c for c in generate(0).cases if c.completion.write is None)


def _call(case: AcqCase) -> dict[str, Any]:
    c = case.broad[0]
    return {"name": c.tool, "arguments": dict(c.arguments)}


def test_smolagents_agent_stops_after_six_steps(case: AcqCase, tmp_path: Path) -> None:
    def turn(messages: list[dict[str, str]]) -> Any:
        if messages[-1]["role"] == "user" and messages[-1]["content"] == case.probe:
            return "no"
        return [_call(case)]  # never done

    agent = AcqSmolagentsAgent(ScriptedSmolModel(turn))
    assert agent.max_steps == BUDGET
    run = run_case(agent, case, files_dir=tmp_path)
    assert len(run.observations) == BUDGET  # one call per step, cut at six


def test_langchain_agent_stops_after_six_steps(case: AcqCase, tmp_path: Path) -> None:
    def turn(messages: list[Any]) -> Any:
        if getattr(messages[-1], "content", None) == case.probe:
            return AIMessage(content="no")
        call = _call(case)
        return AIMessage(content="", tool_calls=[{"name": call["name"], "args": call["arguments"],
                                                  "id": f"c{len(messages)}"}])

    agent = AcqLangChainAgent(ScriptedChatModel(turn))
    run = run_case(agent, case, files_dir=tmp_path)
    assert 0 < len(run.observations) <= BUDGET
