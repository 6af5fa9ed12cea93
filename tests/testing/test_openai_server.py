"""The loopback OpenAI-compatible server, exercised with the real ``openai`` SDK and raw HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tpguard.testing.openai_server import (
    ScriptedOpenAIServer,
    ScriptedToolCall,
    ScriptedTurn,
    ScriptError,
    as_turn,
    message_text,
    new_messages,
)

openai = pytest.importorskip("openai")

TOOLS = [{"type": "function", "function": {"name": "notify_patient", "description": "notify",
          "parameters": {"type": "object", "properties": {"message": {"type": "string"}}}}}]
USER = {"role": "user", "content": "Tell Maria her prescription is ready."}


def _client(server: ScriptedOpenAIServer, **kw: Any) -> Any:
    return openai.OpenAI(base_url=server.base_url, api_key="test", **kw)


def _raw(server: ScriptedOpenAIServer, method: str, path: str, data: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any], Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, dict(err.headers), json.loads(err.read())


def test_tool_calls_round_trip_with_sequential_ids_and_recorded_requests() -> None:
    script = [
        [{"name": "notify_patient", "arguments": {"message": "RX-88213 is ready"}},
         {"name": "notify_patient", "arguments": {"message": "see you"}}],
        [{"name": "notify_patient", "arguments": {"message": "again"}}],
        "All done.",
    ]
    with ScriptedOpenAIServer(script) as server, _client(server) as client:
        messages: list[Any] = [USER]
        first = client.chat.completions.create(model="scripted", messages=messages, tools=TOOLS)
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert [c.id for c in choice.message.tool_calls] == ["call_1", "call_2"]
        assert json.loads(choice.message.tool_calls[0].function.arguments) == {"message": "RX-88213 is ready"}
        assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
        messages += [choice.message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": "call_1", "content": "sent"},
                     {"role": "tool", "tool_call_id": "call_2", "content": "sent too"}]
        second = client.chat.completions.create(model="scripted", messages=messages, tools=TOOLS)
        assert [c.id for c in second.choices[0].message.tool_calls] == ["call_3"]
        messages += [second.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": "call_3", "content": "ok"}]
        third = client.chat.completions.create(model="scripted", messages=messages)
        assert third.choices[0].finish_reason == "stop"
        assert third.choices[0].message.content == "All done."
        assert third.choices[0].message.tool_calls is None
        recorded = server.requests
    assert server.turns_served == 3 and len(recorded) == 3
    assert recorded[0]["tools"] == TOOLS and recorded[0]["messages"] == [USER]
    assert [m["content"] for m in new_messages(recorded[1])] == ["sent", "sent too"]
    assert recorded[2]["messages"][-1] == {"role": "tool", "tool_call_id": "call_3", "content": "ok"}
    assert not server.running


def test_callable_script_reacts_to_the_conversation() -> None:
    def decide(request: dict[str, Any]) -> Any:
        said = " ".join(message_text(m) for m in new_messages(request))
        if "blocked" in said:
            return [{"name": "notify_patient", "arguments": {"message": "clean"}}]
        if request["messages"][-1]["role"] == "tool":
            return "finished"
        return [{"name": "notify_patient", "arguments": {"message": "leaky"}}]

    with ScriptedOpenAIServer(decide) as server, _client(server) as client:
        messages: list[Any] = [USER]
        seen = []
        for tool_reply in ("blocked: phone withheld", "sent", None):
            resp = client.chat.completions.create(model="scripted", messages=messages, tools=TOOLS)
            msg = resp.choices[0].message
            if tool_reply is None:
                assert msg.content == "finished"
                break
            call = msg.tool_calls[0]
            seen.append(json.loads(call.function.arguments)["message"])
            messages += [msg.model_dump(exclude_none=True),
                         {"role": "tool", "tool_call_id": call.id, "content": tool_reply}]
    assert seen == ["leaky", "clean"]


@pytest.mark.parametrize("include_usage", [True, False])
def test_streaming_sends_deltas_the_sdk_reassembles(include_usage: bool) -> None:
    turn = {"content": "Calling now.",
            "tool_calls": [{"name": "notify_patient", "arguments": {"message": "pickup RX-88213"}}]}
    with ScriptedOpenAIServer([turn]) as server, _client(server) as client:
        kwargs: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
        chunks = list(client.chat.completions.create(model="scripted", messages=[USER], tools=TOOLS,
                                                     stream=True, **kwargs))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    pieces = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert content == "Calling now."
    assert pieces[0].id == "call_1" and pieces[0].function.name == "notify_patient"
    assert len(pieces) >= 3  # header, then the arguments in more than one piece
    args = "".join(p.function.arguments or "" for p in pieces)
    assert json.loads(args) == {"message": "pickup RX-88213"}
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["tool_calls"]
    usage = [c.usage for c in chunks if c.usage is not None]
    assert (len(usage) == 1 and not chunks[-1].choices) if include_usage else usage == []


def test_bad_requests_get_openai_error_envelopes_and_are_not_retried() -> None:
    tool_call = {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    cases = [
        ({"messages": [USER]}, "model"),
        ({"model": "scripted", "messages": []}, "messages"),
        ({"model": "scripted", "messages": [{"role": "tool-response", "content": "x"}]}, "messages[0].role"),
        ({"model": "scripted", "messages": [USER, {"role": "assistant", "tool_calls": [tool_call]}, USER]},
         "messages[2]"),
        ({"model": "scripted", "messages": [USER, {"role": "tool", "tool_call_id": "call_9", "content": "x"}]},
         "messages[1]"),
        ({"model": "scripted", "messages": [USER], "tools": [{"type": "function"}]}, "tools[0]"),
    ]
    with ScriptedOpenAIServer(["never reached"], raise_script_errors=False) as server:
        for body, param in cases:
            status, headers, payload = _raw(server, "POST", "/v1/chat/completions", json.dumps(body).encode())
            assert status == 400, body
            assert payload["error"]["param"] == param
            assert payload["error"]["type"] == "invalid_request_error" and payload["error"]["message"]
            assert headers["x-should-retry"] == "false"
        status, _, payload = _raw(server, "POST", "/v1/chat/completions", b"{not json")
        assert status == 400 and "JSON" in payload["error"]["message"]
        assert _raw(server, "GET", "/v1/chat/completions")[0] == 405
        assert _raw(server, "GET", "/v1/embeddings")[2]["error"]["code"] == "unknown_url"
        with _client(server) as client, pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(model="scripted", messages=[{"role": "robot", "content": "x"}])
        assert err.value.status_code == 400
        assert server.turns_served == 0
        assert len(server.requests) == len(cases) + 1  # every parsed body, rejected ones included


def test_exhausted_script_and_failing_callable_are_reported_at_exit() -> None:
    with pytest.raises(ScriptError, match="1 turn"):
        with ScriptedOpenAIServer(["only one"]) as server, _client(server) as client:
            client.chat.completions.create(model="scripted", messages=[USER])
            with pytest.raises(openai.BadRequestError) as err:
                client.chat.completions.create(model="scripted", messages=[USER])
            assert err.value.code == "script_exhausted"
            assert len(server.requests) == 2  # x-should-retry: false — the SDK did not retry

    def broken(request: dict[str, Any]) -> Any:
        raise KeyError("no such turn")

    with pytest.raises(ScriptError) as info:
        with ScriptedOpenAIServer(broken) as server, _client(server) as client:
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model="scripted", messages=[USER])
            assert len(server.requests) == 1
    assert isinstance(info.value.__cause__, KeyError)


def test_models_and_api_key() -> None:
    with ScriptedOpenAIServer(["hi"], api_key="sk-local", models=("scripted", "other")) as server:
        with _client(server) as wrong, pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        with openai.OpenAI(base_url=server.base_url, api_key="sk-local") as client:
            assert [m.id for m in client.models.list()] == ["scripted", "other"]
            assert client.models.retrieve("other").owned_by == "tpguard"
            with pytest.raises(openai.NotFoundError):
                client.models.retrieve("gpt-nope")
            assert client.chat.completions.create(model="scripted", messages=[USER]).choices[0].message.content == "hi"


def test_listens_on_loopback_only_and_really_stops_with_keep_alive_connections() -> None:
    server = ScriptedOpenAIServer(["a", "b"]).start()
    port = server.port
    assert server.base_url == f"http://127.0.0.1:{port}/v1"
    with _client(server) as client:
        client.chat.completions.create(model="scripted", messages=[USER])  # leaves a pooled connection
        before = time.monotonic()
        server.stop()
        assert time.monotonic() - before < 3
    alive = [t.name for t in threading.enumerate()]
    assert not [n for n in alive if "process_request" in n or n == "tpguard-openai-server"], alive
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    server.stop()  # idempotent


def test_turns_are_normalised_and_bad_turns_fail_early() -> None:
    call = ScriptedToolCall("f", {"a": 1})
    assert as_turn("text") == ScriptedTurn(content="text")
    assert as_turn([{"name": "f", "arguments": {"a": 1}}]) == ScriptedTurn(tool_calls=(call,))
    assert as_turn({"name": "f", "arguments": '{"a": 1}'}) == ScriptedTurn(tool_calls=(call,))
    assert as_turn({"content": "x", "tool_calls": [call]}).finish_reason == "tool_calls"
    bad: Any
    for bad in ([], {"content": None}, [{"arguments": {}}], 42, [{"name": "f", "arguments": [1]}]):
        with pytest.raises((TypeError, ValueError)):
            as_turn(bad)
    with pytest.raises(TypeError):
        ScriptedOpenAIServer("not a list of turns")
    with pytest.raises(TypeError):
        ScriptedOpenAIServer(["fine", 42])


def test_cli_serves_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[{"name": "notify_patient", "arguments": {"message": "hi"}}], "bye"]))
    proc = subprocess.Popen([sys.executable, "-m", "tpguard.testing.openai_server", "--script", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with openai.OpenAI(base_url=base_url, api_key="x") as client:
            resp = client.chat.completions.create(model="scripted", messages=[USER], tools=TOOLS)
        assert resp.choices[0].message.tool_calls[0].function.name == "notify_patient"
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([42]))
    done = subprocess.run([sys.executable, "-m", "tpguard.testing.openai_server", "--script", str(bad)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "turn [0]" in done.stderr


@pytest.mark.skipif(find_spec("langchain_openai") is None, reason="langchain-openai not installed")
@pytest.mark.parametrize("stream", [False, True])
def test_chat_openai_invoke_and_stream_parse_scripted_tool_calls(stream: bool) -> None:
    from langchain_openai import ChatOpenAI

    script = [[{"name": "notify_patient", "arguments": {"message": "RX-88213 ready"}}]]
    with ScriptedOpenAIServer(script) as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key="test", model="scripted", max_retries=0)
        bound = llm.bind_tools([TOOLS[0]])
        if stream:
            chunks = list(bound.stream("go"))
            msg: Any = chunks[0]
            for chunk in chunks[1:]:
                msg = msg + chunk
        else:
            msg = bound.invoke("go")
        body = server.requests[0]
    assert msg.tool_calls == [{"name": "notify_patient", "args": {"message": "RX-88213 ready"},
                               "id": "call_1", "type": "tool_call"}]
    assert body["model"] == "scripted" and body["tools"][0]["function"]["name"] == "notify_patient"
    assert bool(body.get("stream")) is stream
