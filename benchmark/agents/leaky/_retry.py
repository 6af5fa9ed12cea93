"""Reading the guard's refusal the way a capable model does: which atom *types* and which
argument *fields* to leave out next time.

The tpguard message reads ``"tpguard withheld this call to X (purpose: …): it does not need
phone, person_name, found in summary, work_notes. Call X again …"``. Types and fields are
comma-separated lists; a field may be a nested path (``items[0].note``), of which the model keeps
the top-level argument. A message this parser does not understand yields ``(None, None)``: the
model then leaves out everything it added.
"""

from __future__ import annotations

import re

__all__ = ["parse_block_message"]

_BLOCK = re.compile(r"does not need (?P<types>.+?), found in (?P<fields>.+?)\.\s+Call\b", re.S)


def _top(path: str) -> str:
    return re.split(r"[.\[]", path.strip(), maxsplit=1)[0]


def parse_block_message(message: str) -> tuple[set[str] | None, set[str] | None]:
    """``(types, fields)`` named by a block message, or ``(None, None)`` if it names none."""
    m = _BLOCK.search(message or "")
    if m is None:
        return None, None
    types = {t.strip() for t in m.group("types").split(",") if t.strip()}
    fields = {_top(f) for f in m.group("fields").split(",") if f.strip()}
    return (types or None), (fields or None)
