"""The tool interface and declared channels of each family (seed ``002_*`` Table 2).

Read tools are one of three operations over a workspace collection — ``list`` (ids and titles),
``search`` (rows with a field containing the query) and ``read`` (one row by id); exit tools emit on
a visible channel. The family fixes which tools exist and which channel each exit tool feeds:

============  ===========================  ==================================================
family        visible exits                exit tools → channel (turn reply → channel)
============  ===========================  ==================================================
``records``   email, console               send_email→email, print_console→console (console)
``office``    email, share, response       send/reply/forward_email→email, share_file→share
                                           (response)
``business``  response, send, reply,       send_email→send, reply_email→reply,
              forward                      forward_email→forward (response)
============  ===========================  ==================================================

Every family also declares the internal channels ``tool_args`` and ``tool_return``.
"""

from __future__ import annotations

from typing import Any

from .schema import Channel

__all__ = ["COLLECTION_TOOLS", "EXIT_TOOLS", "FAMILY_CHANNELS", "FAMILY_TOOLS", "TITLE", "TOOLS",
           "channel_of_tool", "reply_channel"]

#: The title field a ``list`` shows for each collection.
TITLE: dict[str, str] = {"records": "name", "emails": "subject", "files": "filename",
                         "calendar": "title", "crm": "customer_name", "analytics": "date",
                         "projects": "task_name"}

#: Read tools: name → (operation, collection).
COLLECTION_TOOLS: dict[str, tuple[str, str]] = {
    "list_records": ("list", "records"), "search_records": ("search", "records"),
    "read_record": ("read", "records"),
    "search_emails": ("search", "emails"), "read_email": ("read", "emails"),
    "list_emails": ("list", "emails"),
    "list_files": ("list", "files"), "search_files": ("search", "files"),
    "read_file": ("read", "files"),
    "search_calendar": ("search", "calendar"), "list_events": ("list", "calendar"),
    "crm_lookup": ("search", "crm"), "list_customers": ("list", "crm"),
    "read_customer": ("read", "crm"),
    "analytics_query": ("search", "analytics"), "project_tasks": ("search", "projects"),
}
EXIT_TOOLS = ("send_email", "reply_email", "forward_email", "share_file", "print_console")

_STR = {"type": "string"}


def _schema(required: dict[str, str], optional: dict[str, str] | None = None) -> dict[str, Any]:
    props = {k: {**_STR, "description": d} for k, d in {**required, **(optional or {})}.items()}
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False}


def _read_tool(op: str, coll: str) -> dict[str, Any]:
    if op == "list":
        return {"description": f"List the {coll} (id and {TITLE[coll]} only).",
                "input_schema": _schema({})}
    if op == "search":
        return {"description": f"Search the {coll}: every entry with a field containing the query.",
                "input_schema": _schema({"query": "text to look for"})}
    return {"description": f"Read one entry of the {coll} by id.",
            "input_schema": _schema({"id": f"the {coll} entry id"})}


TOOLS: dict[str, dict[str, Any]] = {
    **{n: _read_tool(op, c) for n, (op, c) in COLLECTION_TOOLS.items()},
    "send_email": {"description": "Send an e-mail.", "input_schema": _schema(
        {"to": "recipient address", "subject": "subject line", "body": "message text"})},
    "reply_email": {"description": "Reply to the sender of an e-mail.", "input_schema": _schema(
        {"email_id": "the e-mail replied to", "body": "message text"})},
    "forward_email": {"description": "Forward an e-mail (its subject and body) to an address.",
                      "input_schema": _schema({"email_id": "the e-mail", "to": "recipient address"},
                                              {"note": "a note above the forwarded text"})},
    "share_file": {"description": "Share a file (its content) with an address.",
                   "input_schema": _schema({"file_id": "the file", "to": "recipient address"})},
    "print_console": {"description": "Print text to the requester's console.",
                      "input_schema": _schema({"text": "text to print"})},
}

FAMILY_TOOLS: dict[str, tuple[str, ...]] = {
    "records": ("list_records", "search_records", "read_record", "search_calendar", "send_email",
                "print_console"),
    "office": ("list_emails", "search_emails", "read_email", "list_files", "search_files",
               "read_file", "search_calendar", "list_events", "send_email", "reply_email",
               "forward_email", "share_file"),
    "business": ("list_emails", "search_emails", "read_email", "search_calendar", "crm_lookup",
                 "list_customers", "read_customer", "analytics_query", "project_tasks",
                 "send_email", "reply_email", "forward_email"),
}

_INTERNAL = (Channel(name="tool_args", visible=False, medium="internal"),
             Channel(name="tool_return", visible=False, medium="internal"))

FAMILY_CHANNELS: dict[str, tuple[Channel, ...]] = {
    "records": (Channel(name="email", visible=True, medium="email", tools=("send_email",)),
                Channel(name="console", visible=True, medium="chat", tools=("print_console",),
                        reply=True), *_INTERNAL),
    "office": (Channel(name="email", visible=True, medium="email",
                       tools=("send_email", "reply_email", "forward_email")),
               Channel(name="share", visible=True, medium="file", tools=("share_file",)),
               Channel(name="response", visible=True, medium="chat", reply=True), *_INTERNAL),
    "business": (Channel(name="response", visible=True, medium="chat", reply=True),
                 Channel(name="send", visible=True, medium="email", tools=("send_email",)),
                 Channel(name="reply", visible=True, medium="email", tools=("reply_email",)),
                 Channel(name="forward", visible=True, medium="email", tools=("forward_email",)),
                 *_INTERNAL),
}


def channel_of_tool(channels: tuple[Channel, ...], tool: str) -> str | None:
    """The visible channel an exit tool emits on, or ``None`` (a read tool)."""
    return next((c.name for c in channels if tool in c.tools), None)


def reply_channel(channels: tuple[Channel, ...]) -> str:
    """The channel the agent's per-turn reply to the requester goes out on."""
    return next(c.name for c in channels if c.reply)
