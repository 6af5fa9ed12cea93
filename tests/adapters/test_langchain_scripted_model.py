"""``ScriptedChatModel``: plays turns, records what it saw, binds tools, runs sync and async."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from tpguard.testing.langchain import ScriptedChatModel


@tool
def ping(x: str) -> str:
    """Ping."""
    return x


async def test_turns_in_order_sync_and_async() -> None:
    model = ScriptedChatModel([[{"name": "ping", "args": {"x": "a"}},
                                {"name": "ping", "args": {"x": "b"}, "id": "mine"}],
                               AIMessage(content="as is"), "final"])
    bound = model.bind_tools([ping])
    assert bound is model and model.bound_tools == ["ping"]
    first = bound.invoke([HumanMessage("hi")])
    assert [(c["name"], c["args"], c["id"]) for c in first.tool_calls] == [
        ("ping", {"x": "a"}, "call_1_1"), ("ping", {"x": "b"}, "mine")]
    assert (await bound.ainvoke("again")).content == "as is"
    assert bound.invoke("last").content == "final"
    assert model.calls == 3 and model.seen[0][0].content == "hi"
    with pytest.raises(ValueError, match="ran out of turns: call 4 but the script has 3"):
        bound.invoke("more")


def test_callable_decides_from_the_conversation() -> None:
    model = ScriptedChatModel(lambda messages: f"you said {len(messages)} things")
    assert model.invoke([HumanMessage("a"), HumanMessage("b")]).content == "you said 2 things"


def test_bad_turn_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="a ScriptedChatModel turn is"):
        ScriptedChatModel([42]).invoke("hi")
    with pytest.raises(TypeError, match="'name', 'args'"):
        ScriptedChatModel([[{"args": {}}]]).invoke("hi")
