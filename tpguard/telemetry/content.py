"""How spans record tool arguments: ``none`` (default), ``redacted``, ``hash`` or ``raw``.

* ``none`` — arguments are not recorded (the default: content capture is opt-in, as in the
  OpenTelemetry GenAI conventions — their ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``
  selects ``redacted`` when ``TPGUARD_RECORD_ARGUMENTS`` is unset, never ``raw``; a span still carries the findings' atom ids, types, methods
  and argument paths, and the decision). Text that is not a registered atom — a diagnosis nobody
  registered — would otherwise reach the trace as written;
* ``redacted`` — every detected atom (authorized or not) becomes ``<type>``;
* ``hash`` — every detected atom becomes ``<type:hmac:…>``, a keyed HMAC-SHA256 (key from
  ``TPGUARD_HASH_KEY``), so the same value links across calls without being guessable from a
  dictionary of phone numbers. A key shorter than 16 bytes is refused (a short key makes the hash
  of a 4-digit PIN a lookup); without a key, a random per-process key is used (with a warning), so
  tags link within one process only — there is no empty or fixed default key;
* ``raw`` — the arguments as received. Only with an explicit opt-in (``allow_raw=True`` or
  ``TPGUARD_ALLOW_RAW_ARGUMENTS=1``) and a warning; meant for sandboxed benchmark runs.

Rendering reads the call's leaf table (one pass, O(size of the call)); dict keys that hold an atom
are rendered like values (``{"<person_name>": …}``).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from ..detect._leaves import CallView, LeafTable
from ..detect._walk import walk
from ..detect.detector import Finding
from ..redaction import HashOperator, Operator, TypeTagOperator, rewrite_text
from . import _env

__all__ = ["MIN_HASH_KEY_BYTES", "ArgumentRecording", "ContentPolicy", "render_arguments"]

ArgumentRecording = Literal["redacted", "hash", "none", "raw"]
MIN_HASH_KEY_BYTES = 16

_log = logging.getLogger("tpguard")
_PROCESS_KEY = secrets.token_bytes(32)


def _no_value(_: str) -> str | None:
    return None


_NO_CAPTURE = frozenset({"", "false", "0", "no", "off", "no_content", "none"})


def _otel_capture() -> str:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content capture: ``redacted``
    (private atoms typed out, the rest as written), never ``raw``; unset or ``false``: ``none``."""
    value = os.environ.get(_env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, "")
    return "none" if value.strip().lower() in _NO_CAPTURE else "redacted"


def _checked_key(key: bytes | str) -> bytes:
    """The key as bytes; shorter than 16 bytes is a ValueError (the key itself is never shown)."""
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) < MIN_HASH_KEY_BYTES:
        raise ValueError(f"the HMAC key for hash argument recording must be at least "
                         f"{MIN_HASH_KEY_BYTES} bytes long (set {_env.TPGUARD_HASH_KEY} or "
                         "hash_key= to a longer random secret)")
    return raw


def _process_key() -> bytes:
    _log.warning("tpguard: %s is not set; hashes use a random per-process key and will "
                 "not link across processes", _env.TPGUARD_HASH_KEY)
    return _PROCESS_KEY


class ContentPolicy:
    """Resolved recording mode plus the HMAC key (never printed)."""

    __slots__ = ("_key", "mode")

    def __init__(
        self, mode: ArgumentRecording | None = None, *, allow_raw: bool = False,
        hash_key: bytes | str | None = None,
    ) -> None:
        chosen: str = mode or os.environ.get(_env.TPGUARD_RECORD_ARGUMENTS) or _otel_capture()
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
        key: bytes | None = None
        if hash_key is not None:  # an explicit key is checked whatever the mode
            key = _checked_key(hash_key)
        elif chosen == "hash":
            env = os.environ.get(_env.TPGUARD_HASH_KEY)
            key = _checked_key(env) if env else _process_key()
        self.mode: ArgumentRecording = chosen  # type: ignore[assignment]
        self._key = key if key is not None else _PROCESS_KEY

    def __repr__(self) -> str:
        return f"ContentPolicy(mode={self.mode!r})"

    def render(
        self, arguments: Any, findings: Iterable[Finding],
        canonical: Callable[[str], str | None] | None = None,
    ) -> str | None:
        return render_arguments(arguments, findings, self.mode, key=self._key, canonical=canonical)

    def render_call(self, call: CallView, canonical: Callable[[str], str | None] | None = None) -> str | None:
        """The guard's path: render from the call's leaf table (no walk). O(size of the call)."""
        return _render(call.table, call.per_leaf, self.mode, self._key, canonical)


def render_arguments(
    arguments: Any, findings: Iterable[Finding], mode: ArgumentRecording, *, key: bytes | str | None = None,
    canonical: Callable[[str], str | None] | None = None,
) -> str | None:
    """The arguments as JSON text for a span; ``canonical(atom_id)`` gives an atom's value for
    ``hash`` mode (so every written form of one fact gets one tag). Findings are matched to value
    leaves by path. ``hash`` needs a ``key`` of at least 16 bytes; without one a random
    per-process key is used (with a warning)."""
    if mode == "none":
        return None
    hmac_key = b""
    if mode == "hash":
        hmac_key = _checked_key(key) if key is not None else _process_key()
    table = walk(arguments)
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_path[f.path].append(f)
    per_leaf = {i: by_path[leaf.path] for i, leaf in enumerate(table.leaves)
                if not leaf.is_key and leaf.path in by_path}
    return _render(table, per_leaf, mode, hmac_key, canonical)


def _render(
    table: LeafTable, per_leaf: Mapping[int, list[Finding]], mode: str, key: bytes,
    canonical: Callable[[str], str | None] | None,
) -> str | None:
    if mode == "none":
        return None
    texts: dict[int, str] = {}
    if mode != "raw":
        tag: Operator = TypeTagOperator()
        for i, found in per_leaf.items():
            text = table.leaves[i].text
            op = HashOperator(key, text, canonical or _no_value) if mode == "hash" else tag
            texts[i] = rewrite_text(text, found, op)
    return json.dumps(table.jsonable(texts), ensure_ascii=False, sort_keys=True)
