"""The real runtime and a real model through the real clients — only where they are installed.

Needs the ``[local]`` extra (``llama-cpp-python``, which compiles llama.cpp: CI does not build it)
and the 135M model already fetched (``tpguard models fetch smollm2-135m``; tests never download).
SmolLM2-135M has no tool template, so it is the plumbing check the issue asks for: it loads in a
second, and when smolagents *requires* a call, the grammar makes even this model produce a valid
one — so a real ``ToolCallingAgent`` step reaches the tool. Set ``TPGUARD_MODELS`` to the cache.
"""

from __future__ import annotations

import json
from importlib.util import find_spec

import openai
import pytest
from smolagents import OpenAIServerModel, Tool, ToolCallingAgent
from smolagents.monitoring import LogLevel

from tpguard.benchmark.local import LlamaBackend, LocalModelServer, ModelError, resolve

pytestmark = pytest.mark.skipif(find_spec("llama_cpp") is None,
                                reason="llama-cpp-python ([local] extra) is not installed")


@pytest.fixture(scope="module")
def server() -> object:
    try:
        path = resolve("smollm2-135m")
    except ModelError:
        pytest.skip("smollm2-135m is not fetched (tpguard models fetch smollm2-135m)")
    with LocalModelServer(LlamaBackend(path, n_ctx=4096, name="smollm2")) as s:
        yield s


class Lookup(Tool):
    name = "lookup_order"
    description = "Look up an order by its id."
    inputs = {"order_id": {"type": "string", "description": "the order id"}}  # noqa: RUF012
    output_type = "string"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def forward(self, order_id: str) -> str:
        self.seen.append(order_id)
        return f"order {order_id}: shipped"


def test_a_plain_reply_through_the_openai_sdk(server: LocalModelServer) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="local", max_retries=0)
    reply = client.chat.completions.create(
        model="smollm2", messages=[{"role": "user", "content": "Say hello."}], max_tokens=16)
    assert reply.choices[0].message.content
    assert reply.usage is not None and reply.usage.prompt_tokens > 5


def _lookup(order_id: dict[str, object]) -> list[dict[str, object]]:
    return [{"type": "function", "function": {"name": "lookup_order", "parameters": {
        "type": "object", "properties": {"order_id": order_id}, "required": ["order_id"]}}}]


def test_a_required_call_is_a_call_to_the_tool(server: LocalModelServer) -> None:
    # an enum bounds the argument, so the grammar alone brings the 135M model to a whole call
    client = openai.OpenAI(base_url=server.url, api_key="local", max_retries=0)
    reply = client.chat.completions.create(
        model="smollm2", max_tokens=64,
        messages=[{"role": "user", "content": "Look up order A-17."}],
        tools=_lookup({"type": "string", "enum": ["A-17", "B-2"]}),  # type: ignore[arg-type]
        tool_choice="required")
    call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "lookup_order"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments)["order_id"] in ("A-17", "B-2")  # type: ignore[union-attr]


def test_a_required_call_cut_at_max_tokens_says_so(server: LocalModelServer) -> None:
    # a free string lets the 135M model ramble inside it; the grammar keeps it one JSON line
    # (no raw new lines), and the reply says it was cut
    client = openai.OpenAI(base_url=server.url, api_key="local", max_retries=0)
    reply = client.chat.completions.create(
        model="smollm2", max_tokens=8,
        messages=[{"role": "user", "content": "Look up order A-17."}],
        tools=_lookup({"type": "string"}), tool_choice="required")  # type: ignore[arg-type]
    choice = reply.choices[0]
    assert choice.finish_reason == "length" and not choice.message.tool_calls
    assert choice.message.content and "\n" not in choice.message.content


def test_a_smolagents_step_reaches_the_tool(server: LocalModelServer) -> None:
    tool = Lookup()
    model = OpenAIServerModel(model_id="smollm2", api_base=server.url, api_key="local",
                              max_tokens=64)
    agent = ToolCallingAgent(tools=[tool], model=model, max_steps=2,
                             verbosity_level=LogLevel.OFF)
    agent.run("Look up order A-17.")
    steps = [s for s in agent.memory.steps if getattr(s, "tool_calls", None)]
    assert steps, "no step made a tool call"
    assert all(c.name in ("lookup_order", "final_answer") for s in steps for c in s.tool_calls)
