"""One run directory per configuration, and one writer at a time.

* :func:`identity` — the options that decide what a record measures (suite, source, seed, agents,
  guards, case selection, what the guard and agent are given). Workers, reports and span export do
  not change a record, so they are not part of it.
* :func:`default_out` — ``runs/<suite>`` / ``runs/<suite>-quick`` for the default agents and
  guards (the README's paths), else a readable slug plus a short hash of the identity, e.g.
  ``runs/need-to-know-oracle+leaky-6g-s0-l12-3f2a``.
* :func:`check_directory` — an existing directory whose ``run.json`` holds another configuration
  is refused unless ``append`` (then ``run.json`` lists every configuration appended); one of
  another *suite* is refused even with ``append``: a run directory holds one suite.
* :class:`RunLock` — ``.lock`` in the directory, held with ``fcntl.flock`` for the whole run: the
  kernel releases it when the process ends, so a crashed run never leaves a stale lock; the file
  holds the writer's PID for the message a second writer gets.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from types import TracebackType
from typing import Any

from ._errors import UsageError
from .config import RunConfig

__all__ = ["RunLock", "RunLocked", "check_directory", "default_out", "identity"]

_IDENTITY = ("suite", "source", "seed", "agents", "guards", "quick", "limit", "domains",
             "guard_knows_variants", "code_agent", "base_url", "guard_path", "presidio_model",
             "task_reading")


class RunLocked(UsageError):
    """Another process writes to this run directory."""


def identity(config: dict[str, Any] | RunConfig) -> dict[str, Any]:
    """The configuration's identity, from a :class:`RunConfig` or a ``run.json`` ``config``."""
    d = config.to_json() if isinstance(config, RunConfig) else config
    out = {k: d.get(k) for k in _IDENTITY}
    for k in ("agents", "guards", "domains"):
        out[k] = list(out[k] or [])
    out["seed"] = int(out["seed"] or 0)
    out["quick"] = bool(out["quick"])
    out["guard_knows_variants"] = bool(out["guard_knows_variants"])
    out["code_agent"] = bool(out["code_agent"])
    out["guard_path"] = out["guard_path"] or "adapter"  # run.json from before the option
    out["task_reading"] = out["task_reading"] or "binary"
    return out


def _hash(ident: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:4]


def _part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+_-]+", "_", text).strip("_")[:40]


def _agent_part(spec: str) -> str:
    kind, _, rest = spec.partition(":")
    if kind == "replay" and rest:
        return "replay_" + _part(Path(rest).stem)
    return _part(spec)


def default_out(config: RunConfig, root: Path = Path("runs")) -> Path:
    """The run directory a configuration gets when ``--out`` is not given."""
    ident = identity(config)
    defaults = identity(RunConfig(suite=config.suite, quick=config.quick))
    if ident == defaults:
        return root / (f"{config.suite}-quick" if config.quick else config.suite)
    parts = [config.suite, "+".join(_agent_part(a) for a in config.agents)]
    guards = list(config.guards)
    parts.append("+".join(guards) if len(guards) <= 2 else f"{len(guards)}g")
    parts.append(f"s{config.seed}")
    if config.quick:
        parts.append("quick")
    if config.limit is not None:
        parts.append(f"l{config.limit}")
    if config.domains:
        parts.append(_part(config.domains[0]) if len(config.domains) == 1
                     else f"{len(config.domains)}d")
    return root / "-".join([*parts, _hash(ident)])


def check_directory(out: Path, config: RunConfig, *, append: bool) -> list[dict[str, Any]]:
    """The configurations the directory will hold after this run (written to ``run.json``).

    Raises :class:`UsageError` when ``out`` holds records of another configuration and not
    ``append``. Reads only; never creates anything.
    """
    mine = identity(config)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    run_json, records = out / "run.json", out / "records.jsonl"
    previous: list[dict[str, Any]] = []
    if run_json.is_file():
        try:
            data = json.loads(run_json.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            data = {}
        previous = [identity(c) for c in data.get("configurations") or
                    ([data["config"]] if isinstance(data.get("config"), dict) else [])]
    elif records.is_file() and records.stat().st_size:
        previous = [{"unknown": "records.jsonl without run.json"}]
    suites = {str(c.get("suite")) for c in previous if c.get("suite")}
    if suites - {mine["suite"]}:
        raise UsageError(f"{out} holds a run of the {', '.join(sorted(suites))} suite; a run "
                         f"directory holds one suite (its reports and comparisons read one "
                         f"suite's metrics), so the {mine['suite']} suite cannot be added to it — "
                         "choose another --out")
    if not previous or previous == [mine] or (mine in previous and append):
        return previous or [mine]
    if mine in previous and not append:
        raise UsageError(f"{out} holds {len(previous)} appended configurations; add --append to "
                         "resume it, or choose another --out")
    if not append:
        raise UsageError(f"{out} holds a run of another configuration ({_differs(previous[-1], mine)})"
                         "; use another --out, or --append to add this configuration to it")
    return [*previous, mine]


def _differs(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = [k for k in _IDENTITY if old.get(k) != new.get(k)] or ["unknown"]
    return "differs in " + ", ".join(keys)


class RunLock:
    """``with RunLock(out):`` — exclusive writer of ``out``; raises :class:`RunLocked`."""

    def __init__(self, out: Path) -> None:
        self.path = out / ".lock"
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl  # POSIX; the benchmark runs on Linux and macOS

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunLocked(f"{self.path.parent} is in use by a running benchmark (PID {holder}); "
                            "wait for it to finish or choose another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        import fcntl

        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
