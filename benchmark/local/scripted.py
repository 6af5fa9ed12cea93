"""``ScriptedBackend``: a :class:`tpguard.benchmark.local.Backend` that replays recorded model outputs.

::

    from tpguard.benchmark.local import LocalModelServer
    from tpguard.benchmark.local.scripted import ScriptedBackend

    backend = ScriptedBackend(QWEN_TEMPLATE, [
        '<tool_call>\\n{"name": "lookup", "arguments": {"order_id": "A-1"}}\\n</tool_call>',
        "The order has shipped.",
    ])
    with LocalModelServer(backend) as server:
        ChatOpenAI(base_url=server.url, api_key="local", model="m").bind_tools([...]).invoke(...)

Everything except the model's weights is real: the chat template renders every prompt (kept in
``prompts``), and when a request requires a call the scripted reply must be valid for the call
schema (kept in ``schemas``) — it is checked with ``jsonschema``, as the grammar would force it —
so a script that a grammar could not produce fails the test instead of passing silently. A reply
may be a callable ``(prompt) -> str``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tpguard.benchmark.local.backend import Generation

__all__ = ["ScriptedBackend"]

Reply = str | Callable[[str], str]
_TAGS = re.compile(r"^\s*<tool_call>\s*(.*?)\s*</tool_call>\s*$", re.DOTALL)


class ScriptedBackend:
    def __init__(self, chat_template: str, replies: Sequence[Reply], *, name: str = "scripted",
                 bos_token: str = "", eos_token: str = "<|im_end|>") -> None:
        self.name, self.chat_template = name, chat_template
        self.bos_token, self.eos_token = bos_token, eos_token
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.prompts: list[str] = []
        self.schemas: list[dict[str, Any] | None] = []

    def generate(self, prompt: str, *, schema: dict[str, Any] | None, max_tokens: int,
                 temperature: float, stop: list[str], seed: int | None) -> Generation:
        with self._lock:
            if not self._replies:
                raise RuntimeError("the script has no reply left")
            reply = self._replies.pop(0)
            self.prompts.append(prompt)
            self.schemas.append(schema)
        text = reply(prompt) if callable(reply) else reply
        if schema is not None:
            _check(text, schema)
        for s in stop:
            if s and s in text:
                text = text[:text.index(s)]
        return Generation(text, len(prompt.split()), len(text.split()), "stop")


def _check(text: str, schema: dict[str, Any]) -> None:
    import jsonschema

    tagged = _TAGS.match(text)
    try:
        value = json.loads(tagged.group(1) if tagged else text)
    except json.JSONDecodeError as e:
        raise AssertionError("a scripted reply to a required call is not JSON") from e
    jsonschema.validate(value, schema)
