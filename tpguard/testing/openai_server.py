"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for testing real clients.

It lets ``langchain_openai.ChatOpenAI``, smolagents' ``OpenAIServerModel`` or the ``openai`` SDK
talk real HTTP to a "model" whose answers are scripted::

    from tpguard.testing.openai_server import ScriptedOpenAIServer

    script = [
        [{"name": "team_handoff", "arguments": {"summary": "RX-88213 ready"}}],   # tool calls
        "Done.",                                                                  # final answer
    ]
    with ScriptedOpenAIServer(script) as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key="test", model="scripted")
        ...
        assert server.requests[1]["messages"][-1]["role"] == "tool"

Instead of a list, pass a callable ``(request_json) -> turn`` that decides from the conversation so
far (e.g. retry with less after the guard's error message). Tool calls get ids ``call_1``,
``call_2``, … in order over the server's life. Served: ``POST /v1/chat/completions`` (JSON, or
server-sent events for ``"stream": true``, with usage when ``stream_options.include_usage``) and
``GET /v1/models[/{id}]``. Requests the real endpoint rejects (bad JSON, no model, unknown roles,
unanswered tool calls, …) get OpenAI's error envelope with a 4xx status; errors carry
``x-should-retry: false`` so SDK retries do not replay the script.

Manual use: ``python -m tpguard.testing.openai_server --script turns.json`` prints the base URL.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import signal
import sys
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from tpguard.testing._http import LoopbackHTTPServer, Reply

from ._openai_script import (
    Script,
    ScriptedToolCall,
    ScriptedTurn,
    ScriptExhausted,
    TurnSource,
    as_turn,
    load_script,
)
from ._openai_wire import ApiError, completion, message_text, stream_chunks, validate_chat_request

__all__ = [
    "ScriptError",
    "ScriptedOpenAIServer",
    "ScriptedToolCall",
    "ScriptedTurn",
    "as_turn",
    "main",
    "message_text",
    "new_messages",
]

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"


class ScriptError(AssertionError):
    """The script could not answer a request (exhausted, or its callable raised)."""


def new_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages a request carries after the last assistant message — what the tools (or the
    user) said since the model last spoke."""
    messages = request.get("messages") or []
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return list(messages[last + 1:])


class ScriptedOpenAIServer:
    """The server; a context manager (or ``start()`` / ``stop()``). Listens on 127.0.0.1 only.

    ``requests`` holds every JSON body posted to the chat endpoint, in arrival order (a body the
    server rejected included). ``errors`` holds script failures; leaving the ``with`` block raises
    :class:`ScriptError` for the first of them unless ``raise_script_errors=False``.
    """

    def __init__(self, script: Script, *, api_key: str | None = None,
                 models: Sequence[str] = ("scripted",), port: int = 0,
                 raise_script_errors: bool = True) -> None:
        self._source = TurnSource(script)
        self._api_key = api_key
        self._models = tuple(models)
        self._port = port
        self._raise = raise_script_errors
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self.errors: list[BaseException] = []
        self._call_ids = itertools.count(1)
        self._response_ids = itertools.count(1)
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._httpd = LoopbackHTTPServer(self._port, self._route)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="tpguard-openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close()
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
        if exc_type is None and self._raise and self.errors:
            first = self.errors[0]
            raise ScriptError(f"the scripted server failed a request: {first}") from first

    # -- what tests read ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — what OpenAI clients take as ``base_url`` / ``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._requests)

    @property
    def turns_served(self) -> int:
        with self._lock:
            return self._source.served

    # -- routing --------------------------------------------------------------------------------
    def _route(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        try:
            self._authorize(headers)
            if path == CHAT_PATH:
                if method != "POST":
                    raise ApiError(405, f"{method} is not allowed on {path}; use POST.")
                return self._chat(body or b"")
            if path == MODELS_PATH or path.startswith(MODELS_PATH + "/"):
                if method != "GET":
                    raise ApiError(405, f"{method} is not allowed on {path}; use GET.")
                return self._list_models(path)
            raise ApiError(404, f"Unknown request URL: {method} {path}.", code="unknown_url")
        except ApiError as err:
            return Reply.error(err)

    def _authorize(self, headers: dict[str, str]) -> None:
        if self._api_key is None:
            return
        if headers.get("authorization") != f"Bearer {self._api_key}":
            raise ApiError(401, "Incorrect API key provided.", code="invalid_api_key")

    def _list_models(self, path: str) -> Reply:
        def card(model: str) -> dict[str, Any]:
            return {"id": model, "object": "model", "created": 0, "owned_by": "tpguard"}

        if path == MODELS_PATH:
            return Reply(body={"object": "list", "data": [card(m) for m in self._models]})
        model = path[len(MODELS_PATH) + 1:]
        if model not in self._models:
            raise ApiError(404, f"The model '{model}' does not exist.", code="model_not_found")
        return Reply(body=card(model))

    def _chat(self, raw: bytes) -> Reply:
        try:
            body = json.loads(raw)
        except ValueError:
            raise ApiError(400, "We could not parse the JSON body of your request.") from None
        with self._lock:
            self._requests.append(copy.deepcopy(body))
            request = validate_chat_request(body)
            turn = self._next_turn(request)
            ids = [f"call_{next(self._call_ids)}" for _ in turn.tool_calls]
            rid = f"chatcmpl-{next(self._response_ids)}"
        created = int(time.time())
        if request.get("stream"):
            return Reply(events=list(stream_chunks(request, turn, ids, rid=rid, created=created)))
        return Reply(body=completion(request, turn, ids, rid=rid, created=created))

    def _next_turn(self, request: dict[str, Any]) -> ScriptedTurn:
        try:
            return self._source.next_turn(request)
        except ScriptExhausted as exc:
            self.errors.append(exc)
            raise ApiError(400, str(exc), code="script_exhausted") from None
        except Exception as exc:  # the test's callable failed: answer, and report at exit
            self.errors.append(exc)
            raise ApiError(500, f"the script raised {type(exc).__qualname__}", type="server_error",
                           code="script_error") from None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tpguard.testing.openai_server --script FILE.json [--port N] [--api-key K]``."""
    parser = argparse.ArgumentParser(prog="python -m tpguard.testing.openai_server",
                                     description="Serve scripted chat completions on 127.0.0.1.")
    parser.add_argument("--script", required=True, help="JSON file: a list of turns")
    parser.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    parser.add_argument("--api-key", default=None, help="require this bearer key")
    args = parser.parse_args(argv)
    try:
        turns = load_script(args.script)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = ScriptedOpenAIServer(turns, api_key=args.api_key, port=args.port,
                                  raise_script_errors=False)
    with server:
        print(server.base_url, flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    for err in server.errors:
        print(f"script error: {err}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
