"""MCP results through the guard's result stage, and the refusal a client sees.

A refusal is a ``CallToolResult`` with ``isError: true`` (the model sees it and can retry with
less), the guard's value-free message as its text, and a machine-readable marker under
``_meta["tpguard/decision"]`` so a client can tell a policy refusal from a tool failure. It is not a
JSON-RPC error: clients show those as transport failures.

What passes the result stage (:meth:`~tpguard.decision.Interception.check_result`, one decision
per part, all on the call's span): each ``text`` part, the text of each embedded ``resource`` part,
``structuredContent``, each text entry of a ``resources/read`` result, and the ``message`` and
``data`` of an upstream JSON-RPC error (they may quote what the tool read). Images, audio, binary
(``blob``) resources and resource links pass unread — tpguard reads text, not pixels or bytes.
A result any part of which is withheld is replaced as a whole by the refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tpguard.guard import Decision, Interception

__all__ = ["META_KEY", "filter_call_result", "filter_error", "filter_read_result", "guarded_result",
           "refusal", "refusal_meta"]

#: the ``_meta`` key of tpguard's marker on a refused or rewritten result
META_KEY = "tpguard/decision"

Check = Callable[[Any], Any]


def refusal_meta(decision: Decision | None, *, mode: str, reason: str = "policy",
                 stage: str = "request") -> dict[str, Any]:
    """The marker: action, stage, mode, reason, and the atom *types* and fields (never values)."""
    meta: dict[str, Any] = {"action": "block", "stage": stage, "mode": mode, "reason": reason}
    if decision is not None:
        meta["action"] = decision.action
        meta["stage"] = decision.stage
        if decision.forbidden:
            meta["atom_types"] = sorted({f.atom_type for f in decision.forbidden})
            meta["fields"] = sorted({f.path for f in decision.forbidden})
        if decision.error:
            meta["error"] = decision.error
    return meta


def refusal(message: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A ``CallToolResult`` (as JSON) telling the client the call was withheld."""
    return {"content": [{"type": "text", "text": message}], "isError": True,
            "_meta": {META_KEY: dict(meta)}}


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _content_part(check: Check, part: Any) -> Any:
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return {**part, "text": _as_text(check(part["text"]))}
    if kind == "resource" and isinstance(part.get("resource"), Mapping):
        return {**part, "resource": _resource_contents(check, part["resource"])}
    return part  # image, audio, resource_link: not read (see the module docstring)


def _resource_contents(check: Check, contents: Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(contents.get("text"), str):
        return {**contents, "text": _as_text(check(contents["text"]))}
    return contents  # a blob: binary, not read


def _withheld(call: Interception) -> Decision | None:
    return next((d for d in call.results if d.blocked), None)


def _changed(call: Interception) -> bool:
    return any(d.action != "allow" for d in call.results)


def _twin(content: Any, structured: Any) -> str | None:
    """How the one text part renders ``structuredContent``, when it is nothing but that: ``"json"``
    (the text is the structure as JSON — the SDK's rendering of a structured result) or
    ``"result"`` (the structure is ``{"result": text}`` — its wrapping of a plain return)."""
    if not (isinstance(structured, Mapping) and isinstance(content, list) and len(content) == 1):
        return None
    part = content[0]
    text = part.get("text") if isinstance(part, Mapping) and part.get("type") == "text" else None
    if not isinstance(text, str):
        return None
    if len(structured) == 1 and structured.get("result") == text:
        return "result"
    if text[:1] in "{[":
        try:
            return "json" if json.loads(text) == structured else None
        except ValueError:
            return None
    return None


def _checked_twin(check: Check, content: list[Any], structured: Mapping[str, Any],
                  twin: str) -> tuple[list[Any], Any]:
    """One check for a text part and the structure it renders (:func:`_twin`): both parts are
    what that one decision lets through, so they cannot disagree."""
    part = content[0]
    if twin == "result":
        text = _as_text(check(part["text"]))
        return [{**part, "text": text}], {**structured, "result": text}
    shown = check(structured)
    text = part["text"] if shown == structured else _as_text(shown)
    return [{**part, "text": text}], shown


def filter_call_result(call: Interception, result: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ``tools/call`` result (JSON) as the client should see it: unchanged when every part was
    allowed (audit always), filtered in redact, the refusal when any part was withheld. A text
    part that only renders ``structuredContent`` is checked with it, once (:func:`_twin`)."""
    check = call.check_result
    content: Any = result.get("content")
    structured: Any = result.get("structuredContent")
    parts: Any
    twin = _twin(content, structured)
    if twin is not None:
        parts, structured = _checked_twin(check, content, structured, twin)
    else:
        parts = [_content_part(check, p) for p in content] if isinstance(content, list) else content
        if isinstance(structured, Mapping) and _withheld(call) is None:
            structured = check(structured)
    withheld = _withheld(call)
    if withheld is not None:
        mode = call.decision.mode
        return refusal(withheld.message or "tpguard withheld this result.",
                       refusal_meta(withheld, mode=mode, stage="result"))
    if not _changed(call):
        return result
    out = {**result, "content": parts}
    if isinstance(structured, Mapping):
        out["structuredContent"] = structured
    meta = dict(result.get("_meta") or {})
    meta[META_KEY] = {"action": "redact", "stage": "result", "mode": call.decision.mode}
    out["_meta"] = meta
    return out


def filter_read_result(call: Interception, result: Mapping[str, Any]) -> tuple[Mapping[str, Any], Decision | None]:
    """A ``resources/read`` result (JSON): each text entry through the result stage. Returns the
    result the client should see and the withholding decision, if any (the caller answers with a
    JSON-RPC error then: ``resources/read`` has no error result)."""
    contents = result.get("contents")
    if not isinstance(contents, list):
        return result, None
    check = call.check_result
    shown = [_resource_contents(check, c) if isinstance(c, Mapping) else c for c in contents]
    withheld = _withheld(call)
    if withheld is not None:
        return result, withheld
    if not _changed(call):
        return result, None
    return {**result, "contents": shown}, None


def filter_error(call: Interception, error: Mapping[str, Any]) -> tuple[Mapping[str, Any], Decision | None]:
    """An upstream JSON-RPC error (``{"code", "message", "data"}``) through the result stage, like
    an ``isError`` result's text: returns the error the client should see (unchanged, or filtered
    in redact) and the withholding decision, if any (the caller answers a refusal then)."""
    check = call.check_result
    message, data = error.get("message"), error.get("data")
    shown_message = _as_text(check(message)) if isinstance(message, str) else message
    shown_data = check(data) if data is not None and _withheld(call) is None else data
    withheld = _withheld(call)
    if withheld is not None:
        return error, withheld
    if not _changed(call):
        return error, None
    return {**error, "message": shown_message, "data": shown_data}, None


def guarded_result(call: Interception, result: Mapping[str, Any], tool: str) -> Mapping[str, Any]:
    """:func:`filter_call_result`, failing closed: if the proxy cannot check the result, the
    refusal (``reason: "error"``) in enforce/redact and the result as it is in audit."""
    try:
        return filter_call_result(call, result)
    except Exception as e:
        mode = call.decision.mode
        if mode == "audit":
            return result
        kind = type(e).__qualname__
        return refusal(f"tpguard could not check the result of {tool} ({kind}) and withheld it.",
                       refusal_meta(None, mode=mode, reason="error", stage="result"))
