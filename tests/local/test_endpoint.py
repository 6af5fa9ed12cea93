"""``LocalModelServer`` end to end with the real clients: LangChain's ``ChatOpenAI`` in a real
``create_agent`` loop, smolagents' ``OpenAIServerModel`` in a real ``ToolCallingAgent`` loop, the
``openai`` SDK (streaming too) — tool call → tool result → final answer. The backend replays
recorded Qwen outputs through the GGUF's own template (:mod:`tpguard.benchmark.local.scripted`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from smolagents import OpenAIServerModel, Tool, ToolCallingAgent
from smolagents.monitoring import LogLevel

from tpguard.benchmark.local import ChatService, LocalModelServer, RequestError
from tpguard.benchmark.local.scripted import ScriptedBackend

QWEN = (Path(__file__).parent / "data" / "qwen2.5-coder-1.5b.jinja").read_text()
SECRET = "Maria Gonzalez, MRN 88213"


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"order {order_id}: shipped"


class LookupTool(Tool):
    name = "lookup_order"
    description = "Look up an order by its id."
    inputs = {"order_id": {"type": "string", "description": "the order id"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, order_id: str) -> str:
        return f"order {order_id}: shipped"


def _call(name: str, **arguments: object) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def test_langchain_create_agent_completes_a_real_loop() -> None:
    backend = ScriptedBackend(QWEN, [_call("lookup_order", order_id="A-17"),
                                     "Order A-17 has shipped."])
    with LocalModelServer(backend) as server:
        llm = ChatOpenAI(base_url=server.url, api_key="local", model="qwen", temperature=0)
        out = create_agent(llm, [lookup_order], system_prompt="Help.").invoke(
            {"messages": [("user", "Where is order A-17?")]})
    messages = out["messages"]
    assert messages[1].tool_calls[0]["name"] == "lookup_order"
    assert messages[1].tool_calls[0]["args"] == {"order_id": "A-17"}
    assert isinstance(messages[2], ToolMessage) and messages[2].content == "order A-17: shipped"
    assert isinstance(messages[-1], AIMessage) and messages[-1].text == "Order A-17 has shipped."
    # the second prompt holds the call as an object and the result in the template's own tags
    assert '{"name": "lookup_order", "arguments": {"order_id": "A-17"}}' in backend.prompts[1]
    assert "<tool_response>\norder A-17: shipped\n</tool_response>" in backend.prompts[1]
    assert backend.schemas == [None, None]  # ChatOpenAI sends no tool_choice: free decoding


def test_smolagents_tool_calling_agent_completes_a_real_loop() -> None:
    backend = ScriptedBackend(QWEN, [_call("lookup_order", order_id="A-17"),
                                     _call("final_answer", answer="shipped")])
    with LocalModelServer(backend) as server:
        model = OpenAIServerModel(model_id="qwen", api_base=server.url, api_key="local")
        agent = ToolCallingAgent(tools=[LookupTool()], model=model, max_steps=4,
                                 verbosity_level=LogLevel.OFF)
        answer = agent.run("Where is order A-17?")
    assert answer == "shipped"
    # smolagents requires a call every step: each reply was checked against the call grammar
    names = [sorted(v["properties"]["name"]["const"] for v in s["oneOf"])
             for s in backend.schemas if s is not None]
    assert names == [["final_answer", "lookup_order"]] * 2
    assert "order A-17: shipped" in backend.prompts[1]


def test_a_named_tool_choice_constrains_to_that_tool() -> None:
    backend = ScriptedBackend(QWEN, [_call("lookup_order", order_id="B-2")])
    with LocalModelServer(backend) as server:
        client = openai.OpenAI(base_url=server.url, api_key="local", max_retries=0)
        reply = client.chat.completions.create(
            model="qwen", messages=[{"role": "user", "content": "B-2?"}],
            tools=[{"type": "function", "function": {
                "name": "lookup_order", "parameters": {
                    "type": "object", "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"]}}}],
            tool_choice={"type": "function", "function": {"name": "lookup_order"}})
    assert reply.choices[0].finish_reason == "tool_calls"
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "lookup_order"
    assert json.loads(call.function.arguments) == {"order_id": "B-2"}
    assert backend.schemas[0]["properties"]["name"] == {"const": "lookup_order"}


def test_streaming_gives_the_same_reply() -> None:
    backend = ScriptedBackend(QWEN, ["All done."])
    with LocalModelServer(backend) as server:
        client = openai.OpenAI(base_url=server.url, api_key="local", max_retries=0)
        chunks = list(client.chat.completions.create(
            model="qwen", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "All done."
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_script_the_grammar_could_not_produce_fails() -> None:
    backend = ScriptedBackend(QWEN, ["I would rather chat."])
    with LocalModelServer(backend) as server:
        r = httpx.post(f"{server.url}/chat/completions", json={
            "messages": [{"role": "user", "content": "x"}], "tool_choice": "required",
            "tools": [{"type": "function", "function": {"name": "lookup_order"}}]})
    assert r.status_code == 500
    assert r.json()["error"]["message"] == "generation failed (AssertionError)"


@pytest.mark.parametrize(("body", "expected"), [
    (b"{not json", "the body is not valid JSON"),
    (b"[]", "the body must be a JSON object"),
    (json.dumps({"messages": []}).encode(), "invalid request fields: messages"),
    (json.dumps({"messages": [{"role": "user", "content": SECRET}], "tool_choice": "required"}
                ).encode(), "tool_choice 'required' needs tools"),
    (json.dumps({"messages": [{"role": "user", "content": SECRET}], "tool_choice": "sometimes"}
                ).encode(), "tool_choice must be auto, none, required or a named function"),
    (json.dumps({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": SECRET}}]}]}).encode(),
     "content part of type 'image_url' is not supported"),
])
def test_bad_requests_get_one_value_free_error(body: bytes, expected: str) -> None:
    backend = ScriptedBackend(QWEN, [])
    with LocalModelServer(backend) as server:
        r = httpx.post(f"{server.url}/chat/completions", content=body,
                       headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == expected
    assert SECRET not in r.text and "88213" not in r.text
    assert backend.prompts == []


def test_models_and_health() -> None:
    with LocalModelServer(ScriptedBackend(QWEN, [], name="qwen-test")) as server:
        models = httpx.get(f"{server.url}/models").json()
        health = httpx.get(server.url.removesuffix("/v1") + "/health").json()
        missing = httpx.get(f"{server.url}/nothing")
    assert [m["id"] for m in models["data"]] == ["qwen-test"]
    assert health == {"status": "ok"} and missing.status_code == 404


def test_the_service_defaults_are_repeatable_and_tool_choice_none_offers_nothing() -> None:
    backend = ScriptedBackend(QWEN, [_call("lookup_order", order_id="A-1")])
    seen: dict[str, object] = {}
    original = backend.generate

    def spy(prompt: str, **kw: object) -> object:
        seen.update(kw)
        return original(prompt, **kw)  # type: ignore[arg-type]

    backend.generate = spy  # type: ignore[method-assign]
    out = ChatService(backend).complete({
        "messages": [{"role": "user", "content": "x"}], "tool_choice": "none",
        "tools": [{"type": "function", "function": {"name": "lookup_order"}}]})
    assert seen["temperature"] == 0.0 and seen["seed"] == 0 and seen["max_tokens"] == 1024
    assert "<tools>" not in backend.prompts[0]
    # with tool_choice "none" a call-shaped reply is text, not a call
    assert out["choices"][0]["message"].get("tool_calls") is None
    assert out["choices"][0]["finish_reason"] == "stop"


def test_a_refused_request_never_reaches_the_model() -> None:
    service = ChatService(ScriptedBackend(QWEN, []))
    with pytest.raises(RequestError, match="not offered"):
        service.complete({"messages": [{"role": "user", "content": "x"}],
                          "tools": [{"type": "function", "function": {"name": "a"}}],
                          "tool_choice": {"type": "function", "function": {"name": "b"}}})
