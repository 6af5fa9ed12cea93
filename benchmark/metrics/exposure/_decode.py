"""What a recipient reads in an observation: its text with JSON string escapes decoded.

Exits often carry ``json.dumps`` text — a reply that restates a tool return, a forwarded CSV — so
a name after a row separator arrives as the two characters ``\\n`` followed by ``Richard
Williams``. A person reading it sees a line break and a name; a whole-token matcher sees
``nRichard``. :func:`decoded` gives the scorer what the recipient saw:

* text that is one JSON object or array → its data (the detector reads every leaf, each leaf's
  escapes already decoded by the JSON parser);
* any other text → the same text with every JSON string escape (``\\n``, ``\\t``, ``\\"``,
  ``\\\\``, ``\\/``, ``\\uXXXX`` and surrogate pairs) replaced by the character it stands for;
* data (the backends hand structured leaves where they have them) → unchanged.

O(len(text)); nothing is logged.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["decoded", "unescape_json"]

_ESCAPE = re.compile(r'\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}'
                     r'|\\u[0-9a-fA-F]{4}|\\["\\/bfnrt]')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _one(m: re.Match[str]) -> str:
    s = m.group()
    if s[1] != "u":
        return _SIMPLE[s[1]]
    try:
        out: str = json.loads(f'"{s}"')
    except ValueError:  # a lone surrogate: keep what was written
        return s
    return out


def unescape_json(text: str) -> str:
    """``text`` with JSON string escapes decoded (a backslash before anything else stays)."""
    return _ESCAPE.sub(_one, text) if "\\" in text else text


def decoded(text: Any) -> Any:
    """What a recipient of ``text`` reads (see the module docstring)."""
    if not isinstance(text, str):
        return text
    s = text.lstrip()
    if s[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(data, dict | list):
                return data
    return unescape_json(text)
