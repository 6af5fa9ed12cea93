"""Mock business backends: shared primitives over a per-case SQLite database, the environment that
binds a case's tools to them, and the SQLite audit log the evaluator reads (seed ``000_*`` §4.6)."""

from __future__ import annotations

from ._store import BusinessObject, Store
from .audit import AuditLog
from .environment import Environment
from .errors import ToolError
from .primitives import (
    PRIMITIVE_CLASSES,
    Comments,
    Console,
    Documents,
    Emails,
    Handoffs,
    Notifications,
    Payments,
    Primitive,
    Records,
    Tickets,
)

__all__ = [
    "PRIMITIVE_CLASSES",
    "AuditLog",
    "BusinessObject",
    "Comments",
    "Console",
    "Documents",
    "Emails",
    "Environment",
    "Handoffs",
    "Notifications",
    "Payments",
    "Primitive",
    "Records",
    "Store",
    "Tickets",
    "ToolError",
]
