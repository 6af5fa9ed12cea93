"""``tpguard serve-model``: a local model behind an OpenAI-compatible endpoint on loopback.

``POST /v1/chat/completions`` (tools, ``tool_choice``, ``stop``, ``seed``, ``stream``),
``GET /v1/models`` and ``GET /health``. Any OpenAI-compatible client works against it; LangChain's
``ChatOpenAI`` and smolagents' ``OpenAIServerModel`` are tested end to end (tool call → tool
result → final answer).

Why tpguard serves the model itself: the stock servers fail with these clients
(``../shared/notes/local-models.md``) — ``llama_cpp.server`` rejects ``content: null`` and
content-part lists (HTTP 500) and drops ``role: "tool"`` messages in its function-calling format;
``llama-server --jinja`` returns no ``tool_calls`` for this model's fenced-JSON replies. The call
format is handled in :mod:`._chat`; the runtime is :mod:`.backend`. The HTTP layer is the standard
library's ``ThreadingHTTPServer`` (:mod:`tpguard.testing._http`, shared with the scripted test server): one model
generates one reply at a time (the backend's lock), so an ASGI stack would add dependencies and
nothing else.

The server never logs or echoes message content: prompts carry the very values tpguard guards.
Errors are OpenAI-shaped ``{"error": {"message", "type"}}`` with value-free messages.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...testing._http import ApiError, LoopbackHTTPServer, Reply, Route
from ._chat import ParsedReply, call_schema, offered_tools, parse_calls, render_prompt
from .backend import Backend, ContextOverflow

__all__ = ["ChatService", "LocalModelServer", "RequestError"]

class RequestError(ValueError):
    """A request the endpoint refuses (HTTP 400), with a value-free message."""


class ChatRequest(BaseModel):
    """The fields of an OpenAI chat-completions request this endpoint reads (others ignored)."""

    model_config = ConfigDict(extra="ignore")

    messages: list[dict[str, Any]] = Field(min_length=1)
    model: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False


class ChatService:
    """Chat completions over a :class:`~.backend.Backend` (no HTTP: the server's and tests' core).

    ``temperature`` and ``max_tokens`` are the defaults for requests that do not set them
    (0 and 1,024: a benchmark wants repeatable replies).
    """

    def __init__(self, backend: Backend, *, temperature: float = 0.0, max_tokens: int = 1024,
                 seed: int = 0) -> None:
        self.backend, self.temperature, self.max_tokens, self.seed = (backend, temperature,
                                                                      max_tokens, seed)

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion (non-streaming shape) for a request body."""
        try:
            req = ChatRequest.model_validate(body)
        except ValidationError as e:
            fields = sorted({".".join(str(p) for p in err["loc"][:1]) for err in e.errors()})
            raise RequestError(f"invalid request fields: {', '.join(fields)}") from None
        offered = offered_tools(req.tools)
        schema = self._schema(req.tool_choice, offered)
        tools = req.tools if offered and req.tool_choice != "none" else None
        try:
            prompt = render_prompt(self.backend.chat_template, req.messages, tools=tools,
                                   bos_token=self.backend.bos_token,
                                   eos_token=self.backend.eos_token)
        except ValueError as e:
            raise RequestError(str(e)) from None
        except Exception as e:  # a template error: its message is the template's own text
            raise RequestError(f"the model's chat template failed ({type(e).__name__})") from None
        stop = [req.stop] if isinstance(req.stop, str) else list(req.stop or [])
        try:
            gen = self.backend.generate(
                prompt, schema=schema, stop=stop,
                max_tokens=req.max_completion_tokens or req.max_tokens or self.max_tokens,
                temperature=self.temperature if req.temperature is None else req.temperature,
                seed=self.seed if req.seed is None else req.seed)
        except ContextOverflow as e:
            raise RequestError(str(e)) from None
        reply = parse_calls(gen.text, offered if tools else {})
        return self._response(req, reply, gen.finish_reason, gen.prompt_tokens,
                              gen.completion_tokens)

    @staticmethod
    def _schema(choice: str | dict[str, Any] | None,
                offered: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        """The call schema when the request requires a call (``required`` or a named tool)."""
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            if not isinstance(name, str):
                raise RequestError("tool_choice must name a function")
            try:
                return call_schema(offered, only=name)
            except ValueError as e:
                raise RequestError(str(e)) from None
        if choice not in (None, "auto", "none", "required"):
            raise RequestError("tool_choice must be auto, none, required or a named function")
        if choice == "required":
            if not offered:
                raise RequestError("tool_choice 'required' needs tools")
            return call_schema(offered)
        return None

    def _response(self, req: ChatRequest, reply: ParsedReply, finish: str, prompt_tokens: int,
                  completion_tokens: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.calls:
            message["tool_calls"] = [c.to_openai() for c in reply.calls]
            finish = "tool_calls"
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
                "created": int(time.time()), "model": req.model or self.backend.name,
                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                             "logprobs": None}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}


def stream_chunks(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A finished completion as ``chat.completion.chunk`` events: one delta with the whole
    message, then the finish reason (and usage)."""
    choice = response["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(message["tool_calls"])]
    base = {"id": response["id"], "object": "chat.completion.chunk",
            "created": response["created"], "model": response["model"]}
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
           "usage": response["usage"]}


def _route(service: ChatService) -> Route:
    """The endpoint's routes over ``service`` (see :mod:`tpguard.testing._http` for the HTTP side)."""
    models = {"object": "list", "data": [{"id": service.backend.name, "object": "model",
                                          "owned_by": "local"}]}

    def route(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        if method == "GET" and path in ("/v1/models", "/models"):
            return Reply(200, models)
        if method == "GET" and path == "/health":
            return Reply(200, {"status": "ok"})
        if path not in ("/v1/chat/completions", "/chat/completions"):
            return Reply.error(ApiError(404, "not found", type="not_found_error"))
        if method != "POST":
            return Reply.error(ApiError(405, "use POST"))
        try:
            request = json.loads(body or b"")
            if not isinstance(request, dict):
                raise RequestError("the body must be a JSON object")
            response = service.complete(request)
        except RequestError as e:
            return Reply.error(ApiError(400, str(e)))
        except ValueError:  # JSON or UTF-8 decoding
            return Reply.error(ApiError(400, "the body is not valid JSON"))
        except Exception as e:  # the runtime failed: say which kind, never the prompt
            return Reply.error(ApiError(500, f"generation failed ({type(e).__name__})",
                                        type="server_error"))
        if request.get("stream"):
            return Reply(200, events=stream_chunks(response))
        return Reply(200, response)

    return route


class LocalModelServer:
    """``with LocalModelServer(backend) as server: ChatOpenAI(base_url=server.url, …)``.

    Binds 127.0.0.1 (loopback only: prompts carry private values) on ``port`` (0: any free port),
    serves on a daemon thread, and stops — open keep-alive connections included — on ``stop()``
    or leaving the ``with`` block.
    """

    def __init__(self, backend: Backend | ChatService, *, port: int = 0) -> None:
        self.service = backend if isinstance(backend, ChatService) else ChatService(backend)
        self._httpd = LoopbackHTTPServer(port, _route(self.service))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalModelServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever,
                                            name="tpguard-local-model", daemon=True)
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted (``tpguard serve-model``)."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.close()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.close()

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
