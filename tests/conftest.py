"""Test-wide setup: no network except loopback, and the shared public data location."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tpguard import PrivateAtom

PUBLIC_DATA = Path(os.environ.get("TPGUARD_PUBLIC_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "public"))
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
    elif isinstance(address, str | bytes):  # AF_UNIX paths are local
        return True
    else:
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> object:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests are offline: refused a connection to {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests are offline: refused a connection to {address!r}")
    return _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TLDEXTRACT_CACHE", str(Path(config.rootpath) / ".tldextract-cache-unused"))


@pytest.fixture(scope="session")
def public_data() -> Path:
    if not (PUBLIC_DATA / "bfcl").is_dir():
        pytest.skip(f"public data not found at {PUBLIC_DATA} (set TPGUARD_PUBLIC_DATA)")
    return PUBLIC_DATA


@pytest.fixture(scope="session")
def healthcare_policy_path() -> Path:
    return EXAMPLES / "healthcare_policy.yaml"


@pytest.fixture(scope="session")
def redact_body() -> Callable[[PrivateAtom, str], str]:
    """``redact_body(atom, body)``: the ``body`` a redact-mode guard holding only ``atom`` sends to
    an external tool whose ``body`` is free text (the call must have been redacted)."""
    from tpguard import Guard, PolicyKB, ToolSpec

    spec = ToolSpec(name="send", sink="external", free_text=("body",))

    def redact(atom: PrivateAtom, body: str) -> str:
        decision = Guard(PolicyKB(atoms=(atom,)), mode="redact").check(spec, {"body": body})
        assert decision.redacted
        out: str = decision.arguments["body"]
        return out

    return redact
