"""``LlamaServerBackend``: local models served by llama.cpp's own ``llama-server``.

The server here is a loopback stand-in speaking llama-server's two routes the backend uses
(``GET /props``, ``POST /completion``, with the fields of llama.cpp's tools/server README) and
replaying recorded Qwen outputs; it records every request body, so the tests check what a real
server would be asked: greedy decoding, the prompt cache, the call grammar. The real binary is
exercised by the runs in docs/real-models.md, not here (CI does not build llama.cpp).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from smolagents import OpenAIServerModel, Tool, ToolCallingAgent
from smolagents.monitoring import LogLevel

from tpguard.benchmark.local import (
    LLAMA_SERVER_ENV,
    ChatService,
    LlamaServerBackend,
    LlamaServerError,
    LocalModelServer,
    ModelError,
    RequestError,
    shared_endpoint,
    stop_endpoint,
)
from tpguard.testing._http import LoopbackHTTPServer, Reply

QWEN = (Path(__file__).parent / "data" / "qwen2.5-coder-1.5b.jinja").read_text()
SECRET = "Maria Gonzalez, MRN 88213"


def _call(name: str, **arguments: object) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def _gbnf(schema: dict[str, Any], tagged: bool) -> str:
    """A stand-in for llama-cpp-python's converter (not installed in CI): names what it got."""
    return f"root ::= call # tagged={tagged} tools={len(schema.get('oneOf', [schema]))}"


class FakeLlamaServer:
    """``/props`` and ``/completion`` as llama-server answers them; replies in order."""

    def __init__(self, model_path: Path, replies: list[str | tuple[int, dict[str, Any]]]) -> None:
        self.model_path, self.replies, self.bodies = model_path, list(replies), []
        self._lock = threading.Lock()
        self._httpd = LoopbackHTTPServer(0, self._route)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _route(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        if method == "GET" and path == "/props":
            return Reply(200, {"chat_template": QWEN, "bos_token": "", "eos_token": "<|im_end|>",
                               "model_path": str(self.model_path), "total_slots": 3})
        if method == "POST" and path == "/completion":
            request = json.loads(body or b"{}")
            with self._lock:
                self.bodies.append(request)
                reply = self.replies.pop(0)
            if isinstance(reply, tuple):
                return Reply(*reply)
            return Reply(200, {"content": reply, "tokens_evaluated": len(request["prompt"]) // 4,
                               "tokens_predicted": len(reply) // 4, "stop_type": "eos",
                               "truncated": False})
        return Reply(404, {"error": {"code": 404, "message": "File Not Found"}})

    def __enter__(self) -> FakeLlamaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._thread.join()
        self._httpd.server_close()


class LookupTool(Tool):
    name = "lookup_order"
    description = "Look up an order by its id."
    inputs = {"order_id": {"type": "string", "description": "the order id"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, order_id: str) -> str:
        return f"order {order_id}: shipped for {SECRET}"


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "qwen-test.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_a_smolagents_loop_runs_on_the_server_greedy_cached_and_grammar_bound(gguf: Path) -> None:
    with FakeLlamaServer(gguf, [_call("lookup_order", order_id="A-17"),
                                _call("final_answer", answer="shipped")]) as fake:
        backend = LlamaServerBackend(fake.url, grammar=_gbnf)
        with LocalModelServer(backend) as server:
            model = OpenAIServerModel(model_id="qwen", api_base=server.url, api_key="local")
            agent = ToolCallingAgent(tools=[LookupTool()], model=model, max_steps=4,
                                     verbosity_level=LogLevel.OFF)
            answer = agent.run("Where is order A-17?")
        backend.close()
    assert answer == "shipped"
    assert (backend.name, backend.slots, backend.model_path) == ("qwen-test", 3, str(gguf))
    assert len(fake.bodies) == 2
    for body in fake.bodies:
        # greedy: temperature 0 is the only sampler; no penalty; the slot's prompt cache reused
        assert body["temperature"] == 0.0 and body["samplers"] == ["temperature"]
        assert body["repeat_penalty"] == 1.0 and body["cache_prompt"] is True
        # smolagents requires a call: the grammar of one call, wrapped in the template's tags
        assert body["grammar"] == "root ::= call # tagged=True tools=2"
        assert body["prompt"].startswith("<|im_start|>system")  # the template ran here
    # the tool's result reached the second prompt in the template's own tags
    assert f"<tool_response>\norder A-17: shipped for {SECRET}\n</tool_response>" \
        in fake.bodies[1]["prompt"]


def test_server_errors_name_the_url_and_status_never_the_prompt(gguf: Path) -> None:
    overflow = (400, {"error": {"code": 400, "type": "exceed_context_size_error",
                                "message": "request (9000 tokens) exceeds the available context"}})
    with FakeLlamaServer(gguf, [(500, {"error": {"message": SECRET}}), overflow]) as fake:
        backend = LlamaServerBackend(fake.url, grammar=_gbnf)
        with pytest.raises(LlamaServerError) as failed:
            backend.generate(f"about {SECRET}", schema=None, max_tokens=8, temperature=0,
                             stop=[], seed=0)
        assert str(failed.value) == f"{fake.url}/completion: HTTP 500"
        # a prompt over the slot's context is the error the chat endpoint answers with a 400
        service = ChatService(backend)
        with pytest.raises(RequestError, match="context window") as refused:
            service.complete({"messages": [{"role": "user", "content": SECRET}]})
        assert SECRET not in str(refused.value)
        backend.close()


def test_only_a_loopback_llama_server_is_used(gguf: Path) -> None:
    with pytest.raises(LlamaServerError, match="loopback"):
        LlamaServerBackend("http://10.0.0.7:8081")
    with pytest.raises(LlamaServerError, match="loopback"):
        LlamaServerBackend("https://127.0.0.1:8081")
    with FakeLlamaServer(gguf, []) as fake:
        url = fake.url
    with pytest.raises(LlamaServerError, match="cannot reach llama-server"):
        LlamaServerBackend(url)  # stopped: nothing listens there now


def test_shared_endpoint_uses_the_server_only_for_the_file_it_serves(
        gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    with FakeLlamaServer(gguf, ["All done."]) as fake:
        monkeypatch.setenv(LLAMA_SERVER_ENV, fake.url)
        with pytest.raises(ModelError, match=r"serves qwen-test\.gguf, not other\.gguf"):
            shared_endpoint(str(other))
        try:
            endpoint = shared_endpoint(str(gguf))
            assert isinstance(endpoint.service.backend, LlamaServerBackend)
            reply = endpoint.service.complete({"messages": [{"role": "user", "content": "hi"}]})
            assert reply["choices"][0]["message"]["content"] == "All done."
        finally:
            stop_endpoint(str(gguf.resolve()))


def test_the_run_option_sets_the_server_for_the_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from tpguard.benchmark.runner.run import _llama_server

    monkeypatch.delenv(LLAMA_SERVER_ENV, raising=False)
    with _llama_server("http://127.0.0.1:8081"):
        assert os.environ[LLAMA_SERVER_ENV] == "http://127.0.0.1:8081"
    assert LLAMA_SERVER_ENV not in os.environ
    monkeypatch.setenv(LLAMA_SERVER_ENV, "http://127.0.0.1:9000")
    with _llama_server("http://127.0.0.1:8081"):
        assert os.environ[LLAMA_SERVER_ENV] == "http://127.0.0.1:8081"
    assert os.environ[LLAMA_SERVER_ENV] == "http://127.0.0.1:9000"

