"""How spans record tool arguments: ``redacted`` (default), ``hash``, ``none`` or ``raw``.

* ``redacted`` — every detected atom (authorized or not) becomes ``<type>``;
* ``hash`` — every detected atom becomes ``<type:hmac:…>``, a keyed HMAC-SHA256 (key from
  ``TPGUARD_HASH_KEY``), so the same value links across calls without being guessable from a
  dictionary of phone numbers;
* ``none`` — arguments are not recorded;
* ``raw`` — the arguments as received. Only with an explicit opt-in (``allow_raw=True`` or
  ``TPGUARD_ALLOW_RAW_ARGUMENTS=1``) and a warning; meant for sandboxed benchmark runs.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, Literal

from .._walk import iter_leaves, replace_at, to_jsonable
from ..detection import Finding
from ..redaction import HashOperator, Operator, TypeTagOperator, rewrite_text
from . import _env

__all__ = ["ArgumentRecording", "ContentPolicy", "render_arguments"]

ArgumentRecording = Literal["redacted", "hash", "none", "raw"]


def _no_value(_: str) -> str | None:
    return None

_log = logging.getLogger("tpguard")
_PROCESS_KEY = secrets.token_bytes(32)


class ContentPolicy:
    """Resolved recording mode plus the HMAC key (never printed)."""

    __slots__ = ("_key", "mode")

    def __init__(
        self, mode: ArgumentRecording | None = None, *, allow_raw: bool = False,
        hash_key: bytes | str | None = None,
    ) -> None:
        chosen: str = mode or os.environ.get(_env.TPGUARD_RECORD_ARGUMENTS, "redacted")
        if chosen not in ("redacted", "hash", "none", "raw"):
            raise ValueError(f"argument recording must be redacted, hash, none or raw (got {chosen!r})")
        if chosen == "raw":
            allowed = allow_raw or os.environ.get(_env.TPGUARD_ALLOW_RAW_ARGUMENTS) == "1"
            if not allowed:
                _log.warning("tpguard: raw argument recording needs allow_raw=True or "
                             "%s=1; recording redacted arguments instead",
                             _env.TPGUARD_ALLOW_RAW_ARGUMENTS)
                chosen = "redacted"
            else:
                _log.warning("tpguard: spans will carry RAW tool arguments, private values "
                             "included; use this only in a sandbox")
        key = hash_key if hash_key is not None else os.environ.get(_env.TPGUARD_HASH_KEY)
        if chosen == "hash" and not key:
            _log.warning("tpguard: %s is not set; hashes use a random per-process key and will "
                         "not link across processes", _env.TPGUARD_HASH_KEY)
        self.mode: ArgumentRecording = chosen  # type: ignore[assignment]
        self._key = (key.encode() if isinstance(key, str) else key) or _PROCESS_KEY

    def __repr__(self) -> str:
        return f"ContentPolicy(mode={self.mode!r})"

    def render(
        self, arguments: Any, findings: Iterable[Finding],
        canonical: Callable[[str], str | None] | None = None,
    ) -> str | None:
        return render_arguments(arguments, findings, self.mode, key=self._key, canonical=canonical)


def render_arguments(
    arguments: Any, findings: Iterable[Finding], mode: ArgumentRecording, *, key: bytes = b"",
    canonical: Callable[[str], str | None] | None = None,
) -> str | None:
    """The arguments as JSON text for a span; ``canonical(atom_id)`` gives an atom's value for
    ``hash`` mode (so every written form of one fact gets one tag)."""
    if mode == "none":
        return None
    if mode == "raw":
        return json.dumps(to_jsonable(arguments), ensure_ascii=False, sort_keys=True)
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_path[f.path].append(f)
    replacements: dict[str, str] = {}
    if by_path:
        for path, _, text in iter_leaves(arguments):
            if path in by_path:
                op: Operator = (HashOperator(key, text, canonical or _no_value) if mode == "hash"
                                else TypeTagOperator())
                replacements[path] = rewrite_text(text, by_path[path], op)
    shown = replace_at(arguments, replacements) if replacements else arguments
    return json.dumps(to_jsonable(shown), ensure_ascii=False, sort_keys=True)
