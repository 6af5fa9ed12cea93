"""A model served by llama.cpp's own server (``llama-server``): many case-runs, one batched model.

:class:`~.backend.LlamaBackend` runs the model in this process and takes one completion at a time:
on a CPU, a case-run then waits while another one generates. ``llama-server --parallel N`` keeps N
slots, each with its own prompt cache, and decodes the slots' tokens in one batch — on the 2-core
machine measured here, aggregate generation grows with the slots while each one's prompt reading
(already batched) does not (docs/real-models.md, "Faster runs"). :class:`LlamaServerBackend` is a
:class:`~.backend.Backend` over that server's ``/completion`` endpoint, so tpguard still renders
the chat template, builds the call grammar and parses the calls (what the stock endpoints get wrong
for this model, ``../shared/notes/local-models.md``); the server only completes a prompt.

Repeatable as the in-process backend is: greedy (``temperature`` 0 keeps only the largest logit),
no repetition penalty, the same GBNF grammar. Batching changes the arithmetic's order, so a
trajectory can differ from an in-process run of the same model; a run records the runtime it used
(``run.json``'s ``config.llama_server``).

Nothing here downloads or starts anything: the server is the user's, on loopback (the prompts carry
the very values tpguard guards). Errors name the URL and the HTTP status, never a prompt.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .backend import ContextOverflow, Generation, call_grammar_text

__all__ = ["LlamaServerBackend", "LlamaServerError"]

#: the sampler chain of a greedy completion: temperature 0 keeps only the largest logit
_GREEDY = {"temperature": 0.0, "samplers": ["temperature"], "repeat_penalty": 1.0,
           "top_k": 0, "dry_multiplier": 0.0, "cache_prompt": True}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class LlamaServerError(RuntimeError):
    """The server cannot be used (unreachable, not a llama-server, or it answered an error)."""


class LlamaServerBackend:
    """``LlamaServerBackend("http://127.0.0.1:8081", name="qwen2.5-coder-1.5b")``.

    Reads the model's chat template and special tokens from the server's ``/props`` once; then
    each :meth:`generate` is one ``POST /completion``, safe to call from many threads at once (the
    server queues what exceeds its slots). ``model_path`` is the GGUF file the server loaded.
    ``grammar`` turns a call schema into GBNF text (default: llama-cpp-python's converter, as
    the in-process backend uses — the ``[local]`` extra).
    """

    def __init__(self, url: str, *, name: str | None = None, timeout: float = 1800.0,
                 grammar: Callable[[dict[str, Any], bool], str] = call_grammar_text) -> None:
        import httpx

        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname not in _LOOPBACK:
            raise LlamaServerError(f"{url!r}: a llama-server on loopback (http://127.0.0.1:PORT) "
                                   "is expected — prompts carry private values")
        self.url = url.rstrip("/")
        self._client = httpx.Client(base_url=self.url, timeout=timeout)
        try:
            self._read_props()
        except LlamaServerError:
            self._client.close()
            raise
        self.name = name or Path(self.model_path).stem
        self._tagged = "<tool_call>" in self.chat_template
        self._to_gbnf = grammar
        self._grammars: dict[str, str] = {}
        self._grammar_lock = threading.Lock()

    def _read_props(self) -> None:
        props = self._get("/props")
        try:
            self.chat_template = str(props["chat_template"])
            self.bos_token = str(props.get("bos_token") or "")
            self.eos_token = str(props.get("eos_token") or "")
            self.model_path = str(props["model_path"])
            self.slots = int(props.get("total_slots") or 1)
        except (KeyError, TypeError, ValueError):
            raise LlamaServerError(f"{self.url}/props: not a llama-server answer") from None
        if not self.chat_template:
            raise LlamaServerError(f"{self.url}: the served model has no chat template")

    def _get(self, path: str) -> dict[str, Any]:
        import httpx

        try:
            reply = self._client.get(path)
        except httpx.HTTPError as e:
            raise LlamaServerError(f"{self.url}: cannot reach llama-server "
                                   f"({type(e).__name__})") from None
        if reply.status_code != 200:
            raise LlamaServerError(f"{self.url}{path}: HTTP {reply.status_code}")
        try:
            body = reply.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise LlamaServerError(f"{self.url}{path}: not a llama-server answer")
        return body

    def _grammar(self, schema: dict[str, Any]) -> str:
        with self._grammar_lock:
            key = json.dumps(schema, sort_keys=True)
            text = self._grammars.get(key)
            if text is None:
                text = self._grammars[key] = self._to_gbnf(schema, self._tagged)
            return text

    def generate(self, prompt: str, *, schema: dict[str, Any] | None, max_tokens: int,
                 temperature: float, stop: list[str], seed: int | None) -> Generation:
        import httpx

        body: dict[str, Any] = {**_GREEDY, "prompt": prompt, "n_predict": max_tokens,
                                "stop": stop, "seed": 0 if seed is None else seed}
        if temperature > 0:  # a sampled completion: the server's default chain at that temperature
            body = {k: v for k, v in body.items() if k not in ("samplers", "top_k")}
            body["temperature"] = temperature
        if schema is not None:
            body["grammar"] = self._grammar(schema)
        try:
            reply = self._client.post("/completion", json=body)
        except httpx.HTTPError as e:
            raise LlamaServerError(f"{self.url}: completion failed ({type(e).__name__})") from None
        if reply.status_code == 400 and "exceed_context_size" in reply.text:
            raise ContextOverflow("the prompt and max_tokens exceed the server's context window "
                                  "per slot")
        if reply.status_code != 200:
            raise LlamaServerError(f"{self.url}/completion: HTTP {reply.status_code}")
        out = reply.json()
        if out.get("truncated"):
            raise ContextOverflow("the prompt and max_tokens exceed the server's context window "
                                  "per slot")
        return Generation(str(out.get("content", "")), int(out.get("tokens_evaluated") or 0),
                          int(out.get("tokens_predicted") or 0),
                          "length" if out.get("stop_type") == "limit" else "stop")

    def close(self) -> None:
        """Close the connections to the server (the server itself is not the backend's)."""
        self._client.close()
