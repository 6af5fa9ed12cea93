"""Binding source tools to the mock backend primitives (:mod:`tpguard.benchmark.backends`).

Source tools keep their own argument names (``receiver_id``, ``content``, no ``amount`` on a
booking), while each primitive validates the names its own services use (a payment charge needs a
positive ``amount``, a notification a ``recipient``, a ticket a ``low…urgent`` priority). A tool
is bound to the primitive of its sink when that primitive accepts every gold call of the tool in a
scratch store; otherwise to ``records`` — the generic system of record — so the oracle path stays
executable. Reads bind to ``records``/``verify`` (the backends' ``lookup`` needs a reference to an
existing object, which a source read of the *source* system's state does not have). The sink the
metrics use is the tool's declared sink either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...backends import PRIMITIVE_CLASSES, Store, ToolError
from ..schema import Binding
from ._common import SourceCall, SourceTool

__all__ = ["bind"]

_RETURNS = {"records": "record_id", "payments": "payment_id", "tickets": "ticket_id",
            "notifications": "notification_id", "comments": "comment_id",
            "handoffs": "handoff_id", "documents": "document_id", "emails": "email_id",
            "console": "output_id"}


#: Verdicts by (primitive, operation, tool, calls): the coordination stages repeat their gold
#: calls across cases, so most bindings are decided without opening a scratch store (a build
#: of ~1,900 drafts opens ~3,000 stores instead of ~8,500).
_VERDICTS: dict[str, bool] = {}


def _accepts(primitive: str, operation: str, tool: str, calls: list[dict[str, Any]]) -> bool:
    key = json.dumps([primitive, operation, tool, calls], sort_keys=True, default=str)
    if key not in _VERDICTS:
        _VERDICTS[key] = _try(primitive, operation, tool, calls)
    return _VERDICTS[key]


def _try(primitive: str, operation: str, tool: str, calls: Iterable[dict[str, Any]]) -> bool:
    store = Store()
    try:
        backend = PRIMITIVE_CLASSES[primitive](store)
        for step, args in enumerate(calls, 1):
            backend.execute(operation, tool, args, step)
    except (ToolError, KeyError):
        return False
    finally:
        store.close()
    return True


def bind(tool: SourceTool, calls: list[SourceCall], required: tuple[str, ...]) -> Binding:
    """The binding of ``tool`` given its gold calls and the arguments every call carries."""
    args = [c.arguments for c in calls if c.tool == tool.name]
    if tool.operation == "lookup":
        primitive, operation = "records", "verify"
    elif _accepts(tool.primitive, "create", tool.name, args):
        primitive, operation = tool.primitive, "create"
    else:
        primitive, operation = "records", "create"
    return Binding(primitive=primitive, operation=operation,
                   required=required, returns=_RETURNS[primitive])
