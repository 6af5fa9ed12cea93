"""ScriptedSmolModel: turns, code translation, callables, what it saw; and the context patch."""

from __future__ import annotations

import importlib.util
import threading
from contextvars import ContextVar

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from smolagents import CodeAgent, ToolCallingAgent, tool  # noqa: E402
from smolagents import local_python_executor as lpe  # noqa: E402
from smolagents.models import ChatMessage, MessageRole, Model  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard.adapters._smolagents_context import _context_timeout  # noqa: E402
from tpguard.testing.smolagents import Code, ScriptedSmolModel, message_text  # noqa: E402


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: first
        b: second
    """
    return a + b


def test_tool_call_turns_become_native_tool_calls() -> None:
    model = ScriptedSmolModel([[{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "c1"},
                                {"name": "add", "arguments": {"a": 3, "b": 4}}]])
    assert isinstance(model, Model)
    msg = model.generate([{"role": "user", "content": "sum"}], tools_to_call_from=[add])
    assert [(c.id, c.function.name, c.function.arguments) for c in msg.tool_calls or []] == [
        ("c1", "add", {"a": 1, "b": 2}), ("call_1", "add", {"a": 3, "b": 4})]
    assert model.seen == [[{"role": "user", "content": "sum"}]]
    assert model.tools_offered == [("add",)]


def test_the_same_script_drives_both_agents() -> None:
    script = [[{"name": "add", "arguments": {"a": 2, "b": 3}}], "the sum is 5"]
    for cls in (ToolCallingAgent, CodeAgent):
        model = ScriptedSmolModel(script)
        agent = cls(tools=[add], model=model, verbosity_level=LogLevel.OFF, max_steps=3)
        assert agent.run("add 2 and 3") == "the sum is 5"
        assert "5" in model.seen[1][-1]["content"]  # the tool's result came back as an observation


def test_code_turns_and_callables() -> None:
    def decide(messages: list[dict[str, str]]) -> str:
        if "Execution logs:\n2" in messages[-1]["content"]:
            return "code:final_answer(add(a=40, b=2))"
        return "the first step did not print 2"

    model = ScriptedSmolModel([Code("x = add(a=1, b=1)\nprint(x)"), decide])
    agent = CodeAgent(tools=[add], model=model, verbosity_level=LogLevel.OFF, max_steps=3)
    assert agent.run("what is 40 + 2?") == 42
    assert model.turn == 2
    assert model.tools_offered == [(), ()]  # CodeAgent offers no native tools


def test_whole_script_as_one_callable_and_exhaustion() -> None:
    calls: list[int] = []

    def script(messages: list[dict[str, str]]) -> str:
        calls.append(len(messages))
        return "ok"

    agent = ToolCallingAgent(tools=[add], model=ScriptedSmolModel(script), verbosity_level=LogLevel.OFF)
    assert agent.run("hi") == "ok" and len(calls) == 1
    short = ScriptedSmolModel(["only one"])
    short.generate([], tools_to_call_from=[add])
    with pytest.raises(RuntimeError, match="no turn 2"):
        short.generate([], tools_to_call_from=[add])
    with pytest.raises(ValueError, match="needs a CodeAgent"):
        ScriptedSmolModel([Code("pass")]).generate([], tools_to_call_from=[add])


def test_message_text_reads_parts_and_strings() -> None:
    msg = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "a"},
                                                     {"type": "image"}, {"type": "text", "text": "b"}])
    assert message_text(msg) == "a\nb"
    assert message_text({"role": "user", "content": "plain"}) == "plain"
    assert message_text(ChatMessage(role=MessageRole.ASSISTANT, content=None)) == ""


def test_context_timeout_carries_contextvars_into_the_worker_thread() -> None:
    """Why the adapter patches CodeAgent's time-out: smolagents' own worker loses the context."""
    var: ContextVar[str] = ContextVar("probe", default="unset")
    original = getattr(lpe.timeout, "__tpguard_original__", lpe.timeout)
    token = var.set("bound")
    try:
        seen_plain = original(5)(lambda: (var.get(), threading.get_ident()))()
        seen_patched = _context_timeout(original)(5)(lambda: (var.get(), threading.get_ident()))()
    finally:
        var.reset(token)
    assert seen_plain[0] == "unset"  # smolagents' worker thread does not see the caller's context
    assert seen_patched[0] == "bound" and seen_patched[1] != threading.get_ident()
