"""The proxy's config file: several upstream servers, each with its own tool specs and defaults.

.. code-block:: yaml

    policy: healthcare_policy.yaml        # relative to this file; a server may name its own
    mode: enforce                          # the command line's --mode wins
    servers:
      healthcare:
        command: [python, upstream.py]     # or  url: http://127.0.0.1:9000/mcp
        env: {CLINIC: north}               # added to the proxy's environment (command only)
        sink: handoff                      # default for this server's tools the policy does not name
        purpose: hand the case to the pharmacy team
        hide_unknown: false
        tools:                             # per-tool specs (override the policy's, by name)
          team_handoff: {purpose: hand the case to the pharmacy team, sink: handoff,
                         free_text: [summary, work_notes]}

A tool's spec comes from the server's ``tools`` first, then the policy's ``tools``, then the
server's ``sink``/``purpose`` defaults, then the unknown tool (sink ``external``). A bad file fails
with the file, the path inside it and what was expected (:class:`~tpguard.errors.PolicyError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from opentelemetry.trace import TracerProvider
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tpguard.errors import PolicyError
from tpguard.guard import Guard, Mode
from tpguard.policy import PolicyKB, PrivateAtom, Sink, ToolSpec, _yaml
from tpguard.policy._file import format_loc

from ._mcp_catalog import ToolCatalog
from ._mcp_transports import ProxySessions, Upstream

__all__ = ["ProxyConfig", "ServerConfig", "build_sessions", "load_config"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Model):
    """One upstream server: ``command`` (argv) or ``url``, plus its tool specs and defaults."""

    command: tuple[str, ...] | None = Field(default=None, min_length=1)
    url: str | None = None
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    policy: str | None = None
    purpose: str = ""
    sink: Sink | None = None
    hide_unknown: bool = False
    tools: dict[str, ToolSpec] = Field(default_factory=dict)

    @field_validator("tools", mode="before")
    @classmethod
    def _named(cls, v: Any) -> Any:
        if isinstance(v, Mapping):
            return {n: {"name": n, **s} if isinstance(s, Mapping) else s for n, s in v.items()}
        return v

    @model_validator(mode="after")
    def _one_upstream(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("exactly one of command (a list: program and arguments) or url")
        return self

    def defaults(self) -> dict[str, Any] | None:
        """The spec fields of this server's tools that nothing else names (None: no defaults)."""
        if self.sink is None and not self.purpose:
            return None
        return {"purpose": self.purpose, "sink": self.sink or "external"}


class ProxyConfig(_Model):
    policy: str | None = None
    mode: Mode | None = None
    servers: dict[str, ServerConfig] = Field(min_length=1)

    @field_validator("servers")
    @classmethod
    def _names(cls, v: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        for name in v:
            if not name or "/" in name or name != name.strip():
                raise ValueError(f"server names are path segments (no '/', no spaces around): {name!r}")
        return v


def load_config(path: Path) -> ProxyConfig:
    """Read and check the config file; relative ``policy``/``cwd`` paths are made absolute
    against the file's folder."""
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
        loader, node = _yaml.compose(text)
        data = _yaml.construct(loader, node)
    except OSError as e:
        raise PolicyError(source, "<file>", f"a readable config file ({type(e).__name__})") from None
    except UnicodeDecodeError as e:
        raise PolicyError(source, "<file>", f"UTF-8 text (byte {e.start} is not UTF-8)") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<file>"
        raise PolicyError(source, where, f"valid YAML ({getattr(e, 'problem', None) or 'a syntax error'})") from None
    try:
        config = ProxyConfig.model_validate(data)
    except ValidationError as e:
        problems = [(format_loc(tuple(err["loc"])), err["msg"].removeprefix("Value error, "))
                    for err in e.errors()]
        error = PolicyError(source, *problems[0])
        error.problems = problems
        raise error from None
    return _resolved(config, path.resolve().parent)


def _resolved(config: ProxyConfig, base: Path) -> ProxyConfig:
    def absolute(p: str | None) -> str | None:
        return None if p is None else str(base / Path(p).expanduser())

    servers = {n: s.model_copy(update={"policy": absolute(s.policy), "cwd": absolute(s.cwd)})
               for n, s in config.servers.items()}
    return config.model_copy(update={"policy": absolute(config.policy), "servers": servers})


def build_sessions(config: ProxyConfig, names: Iterable[str], *, policy: str | Path | None = None,
                   mode: str | None = None, atoms: Iterable[PrivateAtom] = (),
                   tracer_provider: TracerProvider | None = None,
                   hide_unknown: bool = False) -> dict[str, ProxySessions]:
    """One :class:`ProxySessions` per named server. ``policy``/``mode`` (the command line's) win
    over the server's and the file's; servers with the same policy file share one guard."""
    guards: dict[str, Guard] = {}
    built: dict[str, ProxySessions] = {}
    for name in names:
        server = config.servers[name]
        path = str(policy) if policy is not None else server.policy or config.policy
        if path is None:
            raise PolicyError(name, "policy", "a policy file: --policy, the server's policy: or the file's")
        if path not in guards:
            guards[path] = Guard(PolicyKB.from_file(path), mode=mode or config.mode or "enforce",  # type: ignore[arg-type]
                                 tracer_provider=tracer_provider)
        guard = guards[path]
        catalog = ToolCatalog(guard, server.tools, hide_unknown=hide_unknown or server.hide_unknown,
                              server=name, defaults=server.defaults())
        upstream = Upstream(command=server.command or (), url=server.url, cwd=server.cwd,
                            env=tuple(server.env.items()))
        built[name] = ProxySessions(guard, catalog, upstream, tuple(atoms), tracer_provider)
    return built
