"""The shared business primitives every case's tools bind to (ToolPrivacyBench §4.5–4.6 sinks).

Each primitive is a small service over the case's :class:`~._store.Store`. Operations
(``Binding.operation``) and what they return:

============== ===================================== =========================================
primitive      operations                            result
============== ===================================== =========================================
records        create, verify, update, lookup        ``REC-000001``; active / verified / updated
payments       charge (= create), refund, lookup     ``PAY-000001``; captured / refunded
tickets        create (= open), update, close, lookup ``TCK-000001``; open / in_progress / closed
notifications  send (= create)                       ``NTF-000001``; queued
comments       add (= create)                        ``CMT-000001``; posted
handoffs       create, accept                        ``HND-000001``; pending_acceptance / accepted
documents      issue (= create), revise, lookup      ``DOC-000001``; issued (version n)
emails         send (= create)                       ``EML-000001``; sent
console        run (= create), log                   ``CON-000001``; exit_code 0 / logged
============== ===================================== =========================================

``update``/``lookup``/``close``/… find their object by its id argument (``record_id``,
``ticket_id``, …, or ``id``); records are also found by ``case_id``. Every operation stores the
arguments it received, so end-state checks read what the backend holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ._arguments import email_like, positive_amount, require_any, text_of
from ._store import BusinessObject, Store
from .errors import ToolError

__all__ = [
    "PRIMITIVE_CLASSES",
    "Comments",
    "Console",
    "Documents",
    "Emails",
    "Handoffs",
    "Notifications",
    "Payments",
    "Primitive",
    "Records",
    "Tickets",
]

Result = dict[str, Any]
_TEXT_FIELDS = ("body", "comment", "note", "text", "message", "summary", "description")


class Primitive:
    """Base class: ``execute(operation, tool, arguments)`` dispatches to ``op_<operation>``."""

    name: ClassVar[str] = ""
    prefix: ClassVar[str] = ""
    aliases: ClassVar[Mapping[str, str]] = {}
    lookup_keys: ClassVar[tuple[str, ...]] = ("id",)

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    def operations(cls) -> tuple[str, ...]:
        ops = [n[3:] for n in dir(cls) if n.startswith("op_")]
        return tuple(sorted({*ops, *cls.aliases}))

    def execute(self, operation: str, tool: str, arguments: Mapping[str, Any], step: int = 0) -> Result:
        op = self.aliases.get(operation, operation)
        handler: Callable[[str, Mapping[str, Any], int], Result] | None = getattr(self, f"op_{op}", None)
        if handler is None:
            raise ToolError(f"{self.name} does not support operation {operation!r} "
                            f"(supported: {', '.join(self.operations())})")
        return handler(tool, arguments, step)

    # -- helpers ------------------------------------------------------------------------------
    def _new(self, tool: str, arguments: Mapping[str, Any], status: str, step: int, **extra: Any) -> Result:
        obj = self.store.insert(self.name, self.prefix, tool, status, dict(arguments), step)
        return {"id": obj.id, "status": status, **extra}

    def _target(self, arguments: Mapping[str, Any]) -> BusinessObject:
        key = require_any(arguments, self.lookup_keys, f"a {self.name} reference")
        ref = text_of(arguments[key]).strip()
        if key == "case_id":
            found = self.store.find(self.name, case_id=ref)
            if found:
                return found[0]
        else:
            obj = self.store.get(self.name, ref)
            if obj is not None:
                return obj
        raise ToolError(f"argument {key!r}: no {self.name} object with that reference", argument=key)

    def _touch(self, tool: str, arguments: Mapping[str, Any], status: str | None = None) -> Result:
        obj = self._target(arguments)
        data = {k: v for k, v in arguments.items() if k not in self.lookup_keys}
        obj = self.store.update(obj, tool, status=status, data=data)
        return {"id": obj.id, "status": obj.status}

    def op_lookup(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        obj = self._target(arguments)
        return {"id": obj.id, "status": obj.status, "fields": obj.data}


class Records(Primitive):
    name, prefix = "records", "REC"
    lookup_keys = ("record_id", "id", "case_id")

    def op_create(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._new(tool, arguments, "active", step)

    def op_verify(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._new(tool, arguments, "verified", step, verified=True)

    def op_update(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._touch(tool, arguments, "updated")


class Payments(Primitive):
    name, prefix = "payments", "PAY"
    aliases: ClassVar[Mapping[str, str]] = {"create": "charge"}
    lookup_keys = ("payment_id", "id")

    def op_charge(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        amount = positive_amount(arguments)
        card = arguments.get("card_suffix")
        if card is not None and not (isinstance(card, str | int) and str(card).isdigit()
                                     and len(str(card)) == 4):
            raise ToolError("argument 'card_suffix': expected the last four digits of the card",
                            argument="card_suffix")
        currency = text_of(arguments.get("currency", "USD")) or "USD"
        return self._new(tool, arguments, "captured", step, amount=amount, currency=currency)

    def op_refund(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        obj = self._target(arguments)
        charged = float(obj.data.get("amount", 0) or 0)
        amount = positive_amount(arguments) if "amount" in arguments else charged
        if amount > charged:
            raise ToolError("argument 'amount': expected at most the captured amount", argument="amount")
        self.store.update(obj, tool, status="refunded")
        return {"id": obj.id, "status": "refunded", "amount": amount}


class Tickets(Primitive):
    name, prefix = "tickets", "TCK"
    aliases: ClassVar[Mapping[str, str]] = {"open": "create"}
    lookup_keys = ("ticket_id", "id")
    PRIORITIES = ("low", "normal", "high", "urgent")
    STATUSES = ("open", "in_progress", "waiting", "resolved", "closed")

    def _check_enums(self, arguments: Mapping[str, Any]) -> None:
        for name, allowed in (("priority", self.PRIORITIES), ("status", self.STATUSES)):
            if name in arguments and arguments[name] not in allowed:
                raise ToolError(f"argument {name!r}: expected one of {', '.join(allowed)}",
                                argument=name)

    def op_create(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        self._check_enums({k: v for k, v in arguments.items() if k == "priority"})
        return self._new(tool, arguments, "open", step, priority=arguments.get("priority", "normal"))

    def op_update(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        self._check_enums(arguments)
        return self._touch(tool, arguments, text_of(arguments.get("status")) or "in_progress")

    def op_close(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._touch(tool, arguments, "closed")


class Notifications(Primitive):
    name, prefix = "notifications", "NTF"
    aliases: ClassVar[Mapping[str, str]] = {"create": "send"}
    CHANNELS = ("sms", "email", "push", "in_app", "voice", "portal")
    RECIPIENT = ("recipient", "phone", "email", "to", "user_id", "contact", "customer_id",
                 "account_id", "employee_id", "student_id", "case_id")

    def op_send(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        require_any(arguments, self.RECIPIENT, "a recipient")
        channel = arguments.get("channel", "sms")
        if channel not in self.CHANNELS:
            raise ToolError(f"argument 'channel': expected one of {', '.join(self.CHANNELS)}",
                            argument="channel")
        return self._new(tool, arguments, "queued", step, channel=channel)


class Comments(Primitive):
    name, prefix = "comments", "CMT"
    aliases: ClassVar[Mapping[str, str]] = {"create": "add"}

    def op_add(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        require_any(arguments, _TEXT_FIELDS, "the comment text")
        return self._new(tool, arguments, "posted", step)


class Handoffs(Primitive):
    name, prefix = "handoffs", "HND"
    lookup_keys = ("handoff_id", "id")

    def op_create(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        require_any(arguments, ("team", "queue", "to_team", "assignee"), "the receiving team")
        return self._new(tool, arguments, "pending_acceptance", step)

    def op_accept(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._touch(tool, arguments, "accepted")


class Documents(Primitive):
    name, prefix = "documents", "DOC"
    aliases: ClassVar[Mapping[str, str]] = {"create": "issue"}
    lookup_keys = ("document_id", "id")

    def op_issue(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        return self._new(tool, {**arguments, "version": 1}, "issued", step, version=1)

    def op_revise(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        obj = self._target(arguments)
        version = int(obj.data.get("version", 1)) + 1
        data = {k: v for k, v in arguments.items() if k not in self.lookup_keys}
        self.store.update(obj, tool, status="revised", data={**data, "version": version})
        return {"id": obj.id, "status": "revised", "version": version}


class Emails(Primitive):
    name, prefix = "emails", "EML"
    aliases: ClassVar[Mapping[str, str]] = {"create": "send"}

    def op_send(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        email_like(arguments, "to")
        return self._new(tool, arguments, "sent", step)


class Console(Primitive):
    name, prefix = "console", "CON"
    aliases: ClassVar[Mapping[str, str]] = {"create": "run"}

    def op_run(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        require_any(arguments, ("command", "action", "script"), "the command to run")
        return self._new(tool, arguments, "completed", step, exit_code=0, output="ok")

    def op_log(self, tool: str, arguments: Mapping[str, Any], step: int) -> Result:
        require_any(arguments, ("message", "text", "line"), "the log message")
        return self._new(tool, arguments, "logged", step)


PRIMITIVE_CLASSES: dict[str, type[Primitive]] = {
    c.name: c for c in (Records, Payments, Tickets, Notifications, Comments, Handoffs, Documents,
                        Emails, Console)
}
