"""What the detector reports: :class:`Finding`, one occurrence of a private atom (built in C by
:func:`new_finding`), and the match :data:`Method` s, ranked by ``_PRIORITY`` (of two matches of an
atom on the same span, the one ranked first is kept)."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, NamedTuple

__all__ = ["METHODS", "Finding", "Method", "new_finding"]

Method = Literal["exact", "alias", "normalized", "fuzzy", "semantic", "masked", "pii"]
METHODS: tuple[str, ...] = Method.__args__  # type: ignore[attr-defined]
_PRIORITY = {m: i for i, m in enumerate(("exact", "alias", "masked", "normalized", "semantic", "fuzzy", "pii"))}


class Finding(NamedTuple):
    """One occurrence of a private atom in a tool call's arguments.

    ``start``/``end`` index the text of the leaf at ``path`` (for numbers, their decimal text).
    ``authorized`` is filled in by the guard (``None`` straight from the detector). A finding never
    carries the matched text, so logging one cannot leak the value. (A named tuple: the guard
    builds several per call, and tuples are the cheapest immutable records Python has.)
    """

    atom_id: str
    atom_type: str
    path: str
    method: Method
    start: int
    end: int
    score: float = 1.0
    free_text: bool = False
    severity: float = 1.0
    authorized: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


#: a :class:`Finding` from its 10 fields as one tuple, built in C (the named tuple's own
#: ``__new__`` is Python code, and a call builds a few findings per text)
new_finding = partial(tuple.__new__, Finding)
