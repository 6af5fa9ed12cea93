"""The error a mock backend raises for a malformed call, as a real service would answer it."""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A tool call the backend rejected.

    The message names the argument and what was expected — never the value received, so an error
    observation handed back to the agent (or written to a log) cannot leak a private value.
    """

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument
