"""tpguard for LangChain 1.x / LangGraph (extra ``tpguard[langchain]``).

Three ways in, from most to least control:

* ``@purpose_bound(purpose=..., sink=..., free_text=[...], guard=g)`` on a ``@tool`` function, a
  ``StructuredTool`` or any ``BaseTool`` (it calls :func:`guard_tool`): the guard sees the
  *validated* arguments; a withheld call reaches the model as ``ToolMessage(status="error")``
  and the run continues; ``redact`` passes the rewritten arguments.
* :class:`PurposeBoundMiddleware` for ``langchain.agents.create_agent`` (``wrap_tool_call`` and
  ``awrap_tool_call``): no change to the tools; ``audit`` mode is audit-only on an existing agent.
  With ``exits=True`` it also guards the model's messages to the requester (``wrap_model_call``
  and ``awrap_model_call``; exposure stage, channel ``final_response``).
* :class:`TpguardCallbackHandler` for anything that takes callbacks (observe-only).

All three work with LangGraph's ``ToolNode`` and parallel tool calls: per-call state lives in
contextvars, and LangChain copies the caller's context into its tool threads, so a
``guard.session(...)`` bound around ``agent.invoke`` is seen by every tool call.
"""

from __future__ import annotations

from ._langchain_callbacks import TpguardCallbackHandler
from ._langchain_middleware import PurposeBoundMiddleware
from ._langchain_tool import ToolCallWithheld, guard_tool

__all__ = ["PurposeBoundMiddleware", "ToolCallWithheld", "TpguardCallbackHandler", "guard_tool"]
