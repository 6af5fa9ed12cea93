"""Test helpers shipped with tpguard, so users test their own guarded agents offline.

* :class:`SpanCapture` / :func:`capture_spans` and the ``tpguard_spans`` pytest fixture (plugin
  registered through the ``pytest11`` entry point): spans in memory with deterministic ids.
* ``ScriptedChatModel`` (LangChain, ``tpguard.testing.langchain``), ``ScriptedSmolModel``
  (smolagents, ``tpguard.testing.smolagents``) and ``ScriptedOpenAIServer`` (an OpenAI-compatible
  chat-completions server on 127.0.0.1, ``tpguard.testing.openai_server``) — imported on first use
  so that ``import tpguard.testing`` needs no framework installed.
* OTLP receivers for export tests: ``tpguard.testing.otlp_receiver`` (needs the ``otlp`` extra).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .spans import SpanCapture, capture_spans

__all__ = ["ScriptedChatModel", "ScriptedOpenAIServer", "ScriptedSmolModel", "SpanCapture",
           "capture_spans"]

_LAZY = {"ScriptedChatModel": ".langchain", "ScriptedSmolModel": ".smolagents",
         "ScriptedOpenAIServer": ".openai_server"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tpguard.testing' has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
