"""What the local endpoint generates with: a :class:`Backend` — llama.cpp in-process by default.

A backend knows its chat template and turns one prompt into one completion, optionally
constrained to the JSON schema of a tool call. :class:`LlamaBackend` runs a GGUF file through
``llama-cpp-python`` (extra ``[local]``); tests and users can pass any object with the same shape
(``tpguard.benchmark.local.scripted.ScriptedBackend`` replays recorded model outputs).

On a shared CPU, OpenMP's default spin-wait starves generation (0.8 instead of ~10 tokens/s on
2 cores, ``../shared/notes/local-models.md``): ``OMP_WAIT_POLICY=PASSIVE`` is set before llama.cpp
loads unless the environment already chose.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

__all__ = ["Backend", "ContextOverflow", "Generation", "LlamaBackend", "call_grammar_text",
           "tool_call_grammar"]


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" | "length"


@runtime_checkable
class Backend(Protocol):
    """One model: its name, chat template and special tokens, and one completion per call."""

    name: str
    chat_template: str
    bos_token: str
    eos_token: str

    def generate(self, prompt: str, *, schema: dict[str, Any] | None, max_tokens: int,
                 temperature: float, stop: list[str], seed: int | None) -> Generation:
        """Complete ``prompt``; with ``schema``, the completion is one JSON value valid for it
        (wrapped in the template's ``<tool_call>`` tags when the template uses them)."""
        ...


class ContextOverflow(ValueError):
    """The prompt and ``max_tokens`` do not fit the model's context window."""


#: llama-cpp-python's converter lets a JSON string hold raw control characters (``[^"\\]``);
#: JSON does not, and a small model then rambles on new lines inside an argument until
#: ``max_tokens``. The rule of llama.cpp's own converter excludes them.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_JSON_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def tool_call_grammar(gbnf: str, tagged: bool) -> str:
    """A GBNF grammar from llama.cpp's JSON-schema conversion — strings without raw control
    characters, as JSON has them — wrapped in ``<tool_call>`` tags when the model's template
    writes calls that way (so constrained output looks like what the model was trained to
    write)."""
    gbnf = gbnf.replace(_LOOSE_CHAR, _JSON_CHAR)
    if not tagged:
        return gbnf
    body = re.sub(r"^root ::=", "call ::=", gbnf, count=1, flags=re.MULTILINE)
    return body + '\nroot ::= "<tool_call>\\n" call "\\n</tool_call>"\n'


def _property_order(schema: Any, out: list[str] | None = None) -> list[str]:
    """Property names in declaration order, ``name`` and ``arguments`` first (llama.cpp's
    converter takes one global order by name)."""
    out = ["name", "arguments"] if out is None else out
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                out.extend(k for k in value if k not in out)
            _property_order(value, out)
    elif isinstance(schema, list):
        for item in schema:
            _property_order(item, out)
    return out


def call_grammar_text(schema: dict[str, Any], tagged: bool) -> str:
    """The GBNF text that constrains a completion to one call valid for ``schema`` (needs
    ``llama-cpp-python``'s converter, the ``[local]`` extra)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    # properties in the order the model was trained to write them: name, then arguments in the
    # tool's own order (the converter sorts them alphabetically otherwise — the model then wrote
    # the arguments before choosing the tool, and kept repeating its first call)
    return tool_call_grammar(json_schema_to_gbnf(json.dumps(schema, sort_keys=True),
                                                 prop_order=_property_order(schema)), tagged)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity call on this OS (macOS, Windows)
        return os.cpu_count() or 1


class LlamaBackend:
    """A GGUF model in-process through ``llama_cpp.Llama`` (loaded once; calls take turns)."""

    def __init__(self, path: str | os.PathLike[str], *, n_ctx: int = 8192,
                 n_threads: int | None = None, seed: int = 0, name: str | None = None) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import llama_cpp
        except ImportError as e:  # the [local] extra is not installed
            raise ImportError("local models need llama-cpp-python: pip install "
                              "'tpguard[local]' (it compiles llama.cpp; see docs/real-models.md)"
                              ) from e
        self._llama_cpp = llama_cpp
        # llama-cpp-python generates on half the CPU count by default (physical cores behind
        # hyper-threads); on the 2-vCPU machines measured here that is one thread, and two
        # generate 1.6× faster (15.8 → 25.8 tokens/s, Qwen2.5-Coder-1.5B Q4_K_M)
        self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx,
                                    n_threads=n_threads or usable_cpus(), seed=seed, verbose=False)
        self.name = name or Path(path).stem
        meta = self._llm.metadata
        self.chat_template = meta.get("tokenizer.chat_template", "")
        if not self.chat_template:
            raise ValueError(f"{Path(path).name} has no chat template in its metadata")
        self.bos_token = self._special(self._llm.token_bos())
        self.eos_token = self._special(self._llm.token_eos())
        self._tagged = "<tool_call>" in self.chat_template
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    def _special(self, token: int) -> str:
        if token < 0:
            return ""
        return self._llm.detokenize([token], special=True).decode("utf-8", "replace")

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = self._grammars[key] = LlamaGrammar.from_string(
                call_grammar_text(schema, self._tagged), verbose=False)
        return grammar

    def generate(self, prompt: str, *, schema: dict[str, Any] | None, max_tokens: int,
                 temperature: float, stop: list[str], seed: int | None) -> Generation:
        with self._lock:
            try:
                out: dict[str, Any] = cast(dict[str, Any], self._llm.create_completion(
                    prompt, max_tokens=max_tokens, temperature=temperature, stop=stop or None,
                    seed=seed, grammar=self._grammar(schema) if schema is not None else None))
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextOverflow("the prompt and max_tokens exceed the model's context "
                                          f"window of {self._llm.n_ctx()} tokens") from None
                raise
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Generation(choice["text"], int(usage.get("prompt_tokens", 0)),
                          int(usage.get("completion_tokens", 0)),
                          "length" if choice.get("finish_reason") == "length" else "stop")
