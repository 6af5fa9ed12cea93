"""Before any case runs: can every agent start? One clear line when not (exit 3).

Reads the ``--agent`` spec only (no request is sent, no model is built):

* ``replay:PATH`` — the file exists and parses (a bad line names file and line), and it holds a
  recording of at least one selected case;
* ``langchain:MODEL`` — without ``--base-url``: the provider's integration package is installed and
  its API key variable is set (``openai:…`` → ``langchain-openai``, ``OPENAI_API_KEY``);
* ``smolagents:MODEL`` — without ``--base-url`` it talks to OpenAI: ``OPENAI_API_KEY`` is set;
* ``langchain:local:MODEL`` / ``smolagents:local:MODEL`` — ``llama-cpp-python`` is installed and
  the model is a fetched known model or a GGUF file (no key, no ``--base-url``: tpguard serves it);
* with ``--base-url`` (either framework) — a TCP connection to the endpoint's host and port opens
  within :data:`CONNECT_TIMEOUT_S` (closed at once; nothing is sent).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Collection, Sequence
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import urlsplit

from ._errors import AgentUnavailable

__all__ = ["CONNECT_TIMEOUT_S", "preflight"]

CONNECT_TIMEOUT_S = 2.0

#: ``init_chat_model`` provider → (API key variable, integration module, pip package).
_PROVIDERS: dict[str, tuple[str | None, str, str]] = {
    "openai": ("OPENAI_API_KEY", "langchain_openai", "langchain-openai"),
    "anthropic": ("ANTHROPIC_API_KEY", "langchain_anthropic", "langchain-anthropic"),
    "google_genai": ("GOOGLE_API_KEY", "langchain_google_genai", "langchain-google-genai"),
    "mistralai": ("MISTRAL_API_KEY", "langchain_mistralai", "langchain-mistralai"),
    "groq": ("GROQ_API_KEY", "langchain_groq", "langchain-groq"),
    "cohere": ("COHERE_API_KEY", "langchain_cohere", "langchain-cohere"),
    "deepseek": ("DEEPSEEK_API_KEY", "langchain_deepseek", "langchain-deepseek"),
    "xai": ("XAI_API_KEY", "langchain_xai", "langchain-xai"),
    "ollama": (None, "langchain_ollama", "langchain-ollama"),
}
#: Model-name prefixes ``init_chat_model`` maps to a provider when none is given.
_INFER = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
          ("chatgpt", "openai"), ("claude", "anthropic"), ("gemini", "google_genai"),
          ("mistral", "mistralai"), ("command", "cohere"), ("deepseek", "deepseek"),
          ("grok", "xai"))


def _provider(model: str) -> str | None:
    if ":" in model:
        return model.split(":", 1)[0].lower()
    return next((p for prefix, p in _INFER if model.lower().startswith(prefix)), None)


def _endpoint(spec: str, base_url: str) -> None:
    parts = urlsplit(base_url if "//" in base_url else f"http://{base_url}")
    host = parts.hostname
    if not host:
        raise AgentUnavailable(f"agent {spec}: --base-url {base_url!r} has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise AgentUnavailable(f"agent {spec}: --base-url {base_url!r} has a bad port") from None
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise AgentUnavailable(f"agent {spec} cannot start: {host}:{port} (--base-url) is not "
                               f"reachable ({type(e).__name__})") from None


def _key(spec: str, var: str, api_key: str | None) -> None:
    if not (api_key or os.environ.get(var)):
        raise AgentUnavailable(f"agent {spec} cannot start: {var} is not set")


def _langchain(spec: str, model: str, base_url: str | None, api_key: str | None) -> None:
    if find_spec("langchain") is None:
        raise AgentUnavailable(f"agent {spec} cannot start: LangChain is not installed "
                               "(pip install 'tpguard[langchain]')")
    if base_url:
        if find_spec("langchain_openai") is None:
            raise AgentUnavailable(f"agent {spec} cannot start: --base-url needs langchain-openai "
                                   "(pip install langchain-openai)")
        _endpoint(spec, base_url)
        return
    provider = _provider(model)
    if provider not in _PROVIDERS:
        return  # a provider we do not know: its own error will be the record's
    var, module, package = _PROVIDERS[provider]
    if find_spec(module) is None:
        raise AgentUnavailable(f"agent {spec} cannot start: provider {provider!r} needs {package} "
                               f"(pip install {package})")
    if var:
        _key(spec, var, api_key)


def _smolagents(spec: str, base_url: str | None, api_key: str | None) -> None:
    if find_spec("smolagents") is None:
        raise AgentUnavailable(f"agent {spec} cannot start: smolagents is not installed "
                               "(pip install 'tpguard[smolagents]')")
    if base_url:
        _endpoint(spec, base_url)
    else:
        _key(spec, "OPENAI_API_KEY", api_key)


def _local(spec: str, model: str) -> None:
    from tpguard.benchmark.local import ModelError, registered, resolve

    if registered(model):
        return
    if find_spec("llama_cpp") is None:
        raise AgentUnavailable(f"agent {spec} cannot start: local models need llama-cpp-python "
                               "(pip install 'tpguard[local]')")
    try:
        resolve(model)
    except ModelError as e:
        raise AgentUnavailable(f"agent {spec} cannot start: {e}") from None


def _replay(spec: str, path: str, case_ids: Collection[str] | None) -> None:
    from ..agents._replay_io import load_recordings

    p = Path(path)
    if not p.is_file():
        raise AgentUnavailable(f"agent {spec} cannot start: no such file {p}")
    try:
        runs = load_recordings(p)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise AgentUnavailable(f"agent {spec} cannot start: {e}") from None
    if case_ids is not None and not set(runs) & set(case_ids):
        raise AgentUnavailable(f"agent {spec} cannot start: {p} records none of the "
                               f"{len(case_ids)} selected cases (it holds {len(runs)} other case ids)")


def preflight(agents: Sequence[str], *, base_url: str | None = None, api_key: str | None = None,
              case_ids: Collection[str] | None = None) -> None:
    """Raise :class:`AgentUnavailable` (one line: agent and cause) if an agent cannot start.

    Without ``case_ids`` every check but a replay file's coverage runs (cheap: call it before the
    suite is built); with them, only the coverage check (call it once the cases are selected)."""
    for spec in agents:
        kind, _, rest = spec.strip().partition(":")
        kind = kind.lower().partition("+")[0]
        if kind in ("langchain", "smolagents") and rest.lower().startswith("local:"):
            if case_ids is None:
                _local(spec, rest.partition(":")[2])
        elif kind == "replay":
            _replay(spec, rest, case_ids)
        elif case_ids is not None:
            continue
        elif kind == "langchain":
            _langchain(spec, rest, base_url, api_key)
        elif kind == "smolagents":
            _smolagents(spec, base_url, api_key)
