"""The call format between OpenAI-style clients and a local model's own chat template.

What the real clients send and what small local models write both differ from what the other side
expects (``../shared/notes/local-models.md``, verified with Qwen2.5-Coder-1.5B):

* **in** — LangChain's ``ChatOpenAI`` sends ``content: null`` beside ``tool_calls``; smolagents sends
  ``content`` as a list of ``{"type": "text", …}`` parts; both send a call's ``arguments`` as a JSON
  *string* (the wire format), which a template's ``tojson`` would encode twice. smolagents also
  writes its past calls as assistant *text* (``Calling tools:\n[{…}]``, a Python literal) and their
  results as *user* text (``Observation:\n…``). :func:`template_messages` turns all of them into what
  a HuggingFace-style template expects: text content, calls as ``tool_calls`` with arguments as
  objects, results as ``role: "tool"`` so the template wraps them in its own tags
  (``<tool_response>``) — the model reads its own past turns in the format it was trained on.
* **out** — the model may write ``<tool_call>{…}</tool_call>`` (its trained format), a fenced
  ```` ```json ```` block, a bare ``{"name": …, "arguments": …}``, a list of them, several of them
  one per line (parallel calls; the last one cut short when the reply hit ``max_tokens``), or the
  template's example copied with doubled braces. :func:`parse_calls` accepts all of these — only
  for tools that were offered — and leaves every other text as the message content.
* **grammar** — when the client requires a call, :func:`call_schema` is the JSON schema of exactly
  one call to an offered tool (its arguments by the tool's own schema); the runtime turns it into a
  grammar that constrains decoding.

Rendering uses jinja2's sandboxed environment with the filters and globals HuggingFace templates
use (as ``transformers`` and ``llama-cpp-python`` do), plus :data:`TEMPLATE_REPAIRS` for known
template defects. Pure functions: no runtime needed, unit-tested on recorded model outputs.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = ["TEMPLATE_REPAIRS", "ParsedReply", "ToolCall", "call_schema", "offered_tools",
           "parse_calls", "render_prompt", "template_messages"]

#: Rendered-prompt repairs for known template defects: the Qwen2.5-Coder GGUF's template shows
#: the call example with literal doubled braces, which the model then copies.
TEMPLATE_REPAIRS: tuple[tuple[str, str], ...] = (
    ('{{"name": <function-name>, "arguments": <args-json-object>}}',
     '{"name": <function-name>, "arguments": <args-json-object>}'),
)

_SMOL_CALLS = re.compile(r"(?:^|\n)Calling tools:\n(\[.*\])\s*$", re.DOTALL)
_SMOL_RESULT = re.compile(r"^(?:Call id: [^\n]*\n)?(?:Observation:\n)?", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")

    def to_openai(self, index: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": "function",
                               "function": {"name": self.name,
                                            "arguments": json.dumps(self.arguments,
                                                                    ensure_ascii=False)}}
        if index is not None:
            out["index"] = index
        return out


@dataclass(frozen=True)
class ParsedReply:
    content: str | None
    calls: tuple[ToolCall, ...] = ()


def _text(content: Any) -> str:
    """A message's content as text: ``None`` → ``""``, a list of parts → their text joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in (None, "text"):
                parts.append(str(part.get("text", "")))
            else:  # images, audio: a text model cannot read them
                raise ValueError(f"content part of type {part.get('type')!r} is not supported"
                                 if isinstance(part, dict) else "content part is not supported")
        return "\n".join(parts)
    raise ValueError("message content must be a string, a list of text parts or null")


def _arguments(raw: Any) -> Any:
    """A call's arguments as an object (the wire format sends a JSON string)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw if raw is not None else {}


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages as a HuggingFace-style template expects them (see the module doc)."""
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"message {i} needs a string 'role'")
        role = message["role"]
        if role == "developer":  # the newer OpenAI name of the system role
            role = "system"
        item: dict[str, Any] = {"role": role, "content": _text(message.get("content"))}
        calls = message.get("tool_calls") or []
        if calls:
            item["tool_calls"] = [
                {"id": c.get("id"), "type": "function",
                 "function": {"name": (c.get("function") or {}).get("name", ""),
                              "arguments": _arguments((c.get("function") or {}).get("arguments"))}}
                for c in calls if isinstance(c, dict)]
        for key in ("name", "tool_call_id"):
            if message.get(key) is not None:
                item[key] = message[key]
        out.append(item)
    return _native_tool_turns(out)


def _smol_calls(text: str) -> tuple[str, list[dict[str, Any]]] | None:
    """``(text before, tool_calls)`` of smolagents' ``Calling tools:\n[…]`` text, else None."""
    m = _SMOL_CALLS.search(text)
    if m is None:
        return None
    try:  # a Python literal (smolagents writes str(list of dicts)); literal_eval runs no code
        calls = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    out = []
    for c in calls if isinstance(calls, list) else []:
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return None
        out.append({"id": c.get("id"), "type": "function",
                    "function": {"name": fn["name"], "arguments": _arguments(fn.get("arguments"))}})
    return (text[:m.start()].strip(), out) if out else None


def _native_tool_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """smolagents' text renderings of calls and results as ``tool_calls`` and ``tool`` turns."""
    out: list[dict[str, Any]] = []
    pending: str | None = None  # the id of the call whose result comes next
    for item in messages:
        if item["role"] == "assistant" and not item.get("tool_calls"):
            found = _smol_calls(item["content"])
            if found is not None:
                item = {**item, "content": found[0], "tool_calls": found[1]}
                pending = found[1][-1].get("id") or ""
                out.append(item)
                continue
        if item["role"] == "user" and pending is not None:
            head = _SMOL_RESULT.match(item["content"])
            if head is not None and head.end() > 0:
                out.append({"role": "tool", "tool_call_id": pending,
                            "content": item["content"][head.end():]})
                pending = None
                continue
        pending = None
        out.append(item)
    return out


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True,
                                        lstrip_blocks=True, extensions=[loopcontrols])

    def tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None,
               separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception,
                       strftime_now=lambda f: datetime.now().strftime(f))
    return env


_ENV = _environment()
_COMPILED: dict[str, jinja2.Template] = {}


def render_prompt(template: str, messages: list[dict[str, Any]], *,
                  tools: list[dict[str, Any]] | None = None, bos_token: str = "",
                  eos_token: str = "") -> str:
    """The prompt the model reads: ``template`` (compiled once per template text) over
    :func:`template_messages` ``(messages)``, with the generation prompt, then the repairs."""
    compiled = _COMPILED.get(template)
    if compiled is None:
        compiled = _COMPILED.setdefault(template, _ENV.from_string(template))
    prompt = compiled.render(messages=template_messages(messages), tools=tools or None,
                             add_generation_prompt=True, bos_token=bos_token,
                             eos_token=eos_token)
    for old, new in TEMPLATE_REPAIRS:
        prompt = prompt.replace(old, new)
    return prompt


def offered_tools(tools: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """``{name: parameters schema}`` of the request's function tools."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = params if isinstance(params, dict) else {"type": "object"}
    return out


def call_schema(tools: dict[str, dict[str, Any]], only: str | None = None) -> dict[str, Any]:
    """The JSON schema of one call (``{"name": …, "arguments": …}``) to an offered tool — or to
    ``only`` — for grammar-constrained decoding."""
    names = [only] if only is not None else list(tools)
    if not names or any(n not in tools for n in names):
        raise ValueError("tool_choice names a tool that was not offered")
    variants = [{"type": "object",
                 "properties": {"name": {"const": n}, "arguments": _plain(tools[n])},
                 "required": ["name", "arguments"], "additionalProperties": False}
                for n in names]
    return variants[0] if len(variants) == 1 else {"oneOf": variants}


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameter schema without the annotations a grammar does not need."""
    return {k: v for k, v in schema.items() if k not in ("title", "description", "$schema")}


def _decode_calls(blob: str) -> tuple[list[Any], str] | None:
    """JSON call objects at the start of ``blob`` — an object, a list, several objects one after
    the other (a model writing parallel calls as JSON lines), or the doubled-brace example form —
    and the text after the last complete one (a reply cut at ``max_tokens`` ends in half an
    object). ``None`` when ``blob`` does not start with one."""
    text = blob.strip()
    for candidate in (text, text[1:-1].strip() if text.startswith("{{") and text.endswith("}}")
                      else None):
        if not candidate:
            continue
        values: list[Any] = []
        pos = 0
        while pos < len(candidate):
            try:
                value, pos = _DECODER.raw_decode(candidate, pos)
            except json.JSONDecodeError:
                break
            values.extend(value if isinstance(value, list) else [value])
            pos = len(candidate) - len(candidate[pos:].lstrip())
        if values:
            return values, candidate[pos:]
    return None


def _as_call(obj: Any, offered: dict[str, dict[str, Any]]) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    inner = obj.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else obj
    name = fn.get("name")
    if not isinstance(name, str) or (offered and name not in offered):
        return None
    args = _arguments(fn.get("arguments", fn.get("parameters", {})))
    return ToolCall(name, args) if isinstance(args, dict) else None


def _calls_in(blob: str, offered: dict[str, dict[str, Any]], *,
              whole: bool = True) -> tuple[list[ToolCall], str] | None:
    """The calls ``blob`` starts with and the text after them; ``None`` unless every decoded
    object is a call to an offered tool (and, with ``whole``, nothing follows them)."""
    decoded = _decode_calls(blob)
    if decoded is None or (whole and decoded[1]):
        return None
    calls = [_as_call(o, offered) for o in decoded[0]]
    if any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None], decoded[1]


def parse_calls(text: str, offered: dict[str, dict[str, Any]]) -> ParsedReply:
    """The model's reply as content and tool calls (only calls to ``offered`` tools count; with no
    tools offered the whole text is content)."""
    if not offered:
        return ParsedReply(text)
    for pattern in (_TAGGED, _FENCED):
        calls: list[ToolCall] = []
        rest, last = [], 0
        for m in pattern.finditer(text):
            found = _calls_in(m.group(1), offered)
            if found is None:
                continue
            calls.extend(found[0])
            rest.append(text[last:m.start()])
            last = m.end()
        if calls:
            rest.append(text[last:])
            return ParsedReply("".join(rest).strip() or None, tuple(calls))
    leading = _calls_in(text, offered, whole=False)
    if leading and leading[0]:
        return ParsedReply(leading[1].strip() or None, tuple(leading[0]))
    return ParsedReply(text)
