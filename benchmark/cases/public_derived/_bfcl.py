"""BFCL multi-turn base → drafts (Berkeley Function Calling Leaderboard, gorilla, Apache-2.0).

Per task: the question turns joined form the prompt; the ground truth (call strings per turn,
parsed with :mod:`ast`) gives the gold calls; ``multi_turn_func_doc/*.json`` gives each called
function's input schema; atoms come from the sensitive leaves of ``initial_config`` and from the
sensitive arguments of the gold calls (seed ``000_*`` §6.1).
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path
from typing import Any

from ._bfcl_tables import (
    ARG_TYPES,
    CLASSES,
    CONFIG_KEYED,
    CONFIG_SKIP,
    CONFIG_TYPES,
    FUNCTIONS,
    NOT_NAMES,
    READ_PREFIXES,
    READS,
)
from ._common import AtomBag, Draft, SourceCall, SourceTool

__all__ = ["BFCL_FILES", "BFCL_VARIANTS", "bfcl_drafts", "bfcl_files"]

#: The multi-turn variants of the base scenarios (same numbering, mostly the same state).
BFCL_VARIANTS = ("miss_func", "miss_param", "long_context")


def bfcl_files(variant: str = "base") -> tuple[str, ...]:
    return (f"bfcl/BFCL_v4_multi_turn_{variant}.json",
            f"bfcl/possible_answer_BFCL_v4_multi_turn_{variant}.json", "bfcl/multi_turn_func_doc")


BFCL_FILES = bfcl_files()
_FREE_TEXT = {"message", "description", "content", "comment_content", "resolution", "summary",
              "note", "notes", "body", "text"}
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer",
          "str": "string", "bool": "boolean", "list": "array"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    """BFCL's parameter dialect (``dict``, ``float``, ``any``) → JSON Schema."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            if value != "any":
                out["type"] = _TYPES.get(value, value)
        elif key == "properties":
            out["properties"] = {k: _schema(v) for k, v in value.items()}
        elif key == "items" and isinstance(value, dict):
            out["items"] = _schema(value)
        elif key != "default" or value is not None:
            out[key] = value
    return out


def _short(description: str) -> str:
    text = description.split("Tool description:", 1)[-1].strip()
    return text.split(". ")[0].rstrip(".")


def _tool(name: str, cls: str, doc: dict[str, Any]) -> SourceTool:
    _file, _domain, class_purpose, sink, primitive = CLASSES[cls]
    short = _short(doc.get("description", ""))
    read = name in READS or name.startswith(READ_PREFIXES) or cls == "MathAPI"
    operation = "lookup" if read else "create"
    purpose = f"{class_purpose}: {short[:1].lower()}{short[1:]}"
    if name in FUNCTIONS:
        sink, primitive, operation, purpose = FUNCTIONS[name]
    schema = _schema(doc.get("parameters", {"type": "dict", "properties": {}}))
    props = schema.get("properties", {})
    free = tuple(p for p, s in props.items() if p in _FREE_TEXT and s.get("type") == "string")
    return SourceTool(name, purpose, sink, primitive, operation, schema, free, short)


def _parse_call(text: str, docs: dict[str, dict[str, Any]]) -> SourceCall:
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    params = list(docs[name].get("parameters", {}).get("properties", {}))
    args: dict[str, Any] = {params[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    for kw in node.keywords:
        if kw.arg is not None:
            args[kw.arg] = ast.literal_eval(kw.value)
    return SourceCall(name, args)


def _keyed_atoms(bag: AtomBag, key: str, value: dict[str, Any]) -> None:
    """State dicts keyed by the user's own identifiers: the keys are atoms, then the values."""
    for k, v in value.items():
        if key == "user_map":
            if k.casefold() not in NOT_NAMES:
                bag.add("person_name", k, f"contact {k} name")
            bag.add("user_id", v, f"contact {k} user id")
            continue
        if not isinstance(v, dict):  # a field beside the records ("order_type": "Buy"), not an id
            _config_atoms(bag, v, k)
            continue
        if key == "credit_card_list":
            bag.add("card_number" if sum(ch.isdigit() for ch in k) >= 12 else "card_id", k)
        else:
            bag.add(CONFIG_KEYED[key], k)
        _config_atoms(bag, v, key)


def _config_atoms(bag: AtomBag, state: Any, key: str = "") -> None:
    if isinstance(state, dict):
        for k, v in state.items():
            if k in CONFIG_SKIP:
                continue
            if isinstance(v, dict) and (k in CONFIG_KEYED or k in ("user_map", "credit_card_list")):
                _keyed_atoms(bag, k, v)
            else:
                _config_atoms(bag, v, k)
    elif isinstance(state, list):
        for item in state:
            _config_atoms(bag, item, key)
    elif key in CONFIG_TYPES:
        bag.add(CONFIG_TYPES[key], state)


def _arg_atoms(bag: AtomBag, calls: list[SourceCall]) -> None:
    for call in calls:
        for arg, value in call.arguments.items():
            atom_type = ARG_TYPES.get(f"{call.tool}.{arg}") or ARG_TYPES.get(arg)
            for item in value if isinstance(value, list) else [value]:
                if atom_type and isinstance(item, str | int | float):
                    bag.add(atom_type, item)


def _draft(q: dict[str, Any], turns: list[list[str]],
           docs: dict[str, dict[str, dict[str, Any]]], variant: str) -> Draft:
    classes = [c for c in q["involved_classes"] if c in CLASSES]
    owner = {fn: c for c in reversed(classes) for fn in docs[c]}
    flat = {fn: doc for c in classes for fn, doc in docs[c].items()}
    calls = [_parse_call(s, flat) for turn in turns for s in turn]
    tools = {c.tool: _tool(c.tool, owner[c.tool], flat[c.tool]) for c in calls}
    bag = AtomBag()
    for cls in classes:
        _config_atoms(bag, q.get("initial_config", {}).get(cls, {}))
    _arg_atoms(bag, calls)
    per_class = Counter(owner[c.tool] for c in calls)
    top = max(per_class.values(), default=0)
    main = next((owner[c.tool] for c in calls if per_class[owner[c.tool]] == top), classes[0])
    prompt = "\n".join(m["content"] for turn in q["question"] for m in turn if m.get("role") == "user")
    num = q["id"].rsplit("_", 1)[-1]
    calls_json = json.dumps([[c.tool, c.arguments] for c in calls], sort_keys=True, default=str)
    return Draft(
        case_id=f"bfcl_{num}" if variant == "base" else f"bfcl_{variant}_{num}",
        source="bfcl" if variant == "base" else f"bfcl_{variant}", source_id=q["id"],
        domain=CLASSES[main][1], prompt=prompt, tools=tools, calls=calls, atoms=bag.atoms,
        labels=bag.labels, metadata={"api_classes": classes, "turns": len(turns)},
        # a variant repeats its base scenario (same number) unless its gold calls differ
        scenario=f"bfcl/{num}/{calls_json}",
    )


def bfcl_drafts(source: Path, variant: str = "base") -> tuple[list[Draft], Counter[str]]:
    """All BFCL multi-turn tasks of ``variant`` as drafts, plus counts of tasks not read."""
    root = source / "bfcl"
    questions = _jsonl(root / f"BFCL_v4_multi_turn_{variant}.json")
    answers = {a["id"]: a["ground_truth"]
               for a in _jsonl(root / f"possible_answer_BFCL_v4_multi_turn_{variant}.json")}
    docs: dict[str, dict[str, dict[str, Any]]] = {}
    for cls, (fname, *_rest) in CLASSES.items():
        path = root / "multi_turn_func_doc" / fname
        docs[cls] = {d["name"]: d for d in _jsonl(path)} if path.is_file() else {}
    drafts: list[Draft] = []
    skipped: Counter[str] = Counter()
    for q in questions:
        if q["id"] not in answers:
            skipped["no ground truth"] += 1
            continue
        try:
            drafts.append(_draft(q, answers[q["id"]], docs, variant))
        except (KeyError, ValueError, SyntaxError):
            skipped["unparsable ground truth"] += 1
    return drafts, skipped
