"""``GuardMiddleware`` in a FastMCP 3.x server, called by FastMCP's own client in memory."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client, FastMCP
from mcp_fixtures import NAME, PHONE, PICKUP, POLICY, RECORD

from tpguard import Guard
from tpguard.adapters.fastmcp import GuardMiddleware
from tpguard.adapters.mcp import META_KEY

LEAKY = {"summary": f"{NAME} ({PHONE}) can collect {PICKUP}.", "pickup_id": PICKUP}


def server(guard: Guard, received: list[dict[str, Any]], **options: Any) -> FastMCP:
    app = FastMCP("clinic", middleware=[GuardMiddleware(guard, **options)])

    @app.tool
    def team_handoff(summary: str, pickup_id: str = "") -> str:
        """Hand the case to the pharmacy team."""
        received.append({"summary": summary, "pickup_id": pickup_id})
        return f"Handoff queued for pickup {pickup_id}."

    @app.tool
    def visit_summary(visit_id: str) -> str:
        """Read the visit record."""
        return RECORD

    return app


async def test_enforce_refuses_before_the_tool_runs_and_redact_rewrites() -> None:
    received: list[dict[str, Any]] = []
    async with Client(server(Guard(POLICY, mode="enforce"), received)) as client:
        refused = await client.call_tool_mcp("team_handoff", LEAKY)
    assert refused.isError and received == []
    assert refused.meta is not None and refused.meta[META_KEY]["atom_types"] == ["person_name", "phone"]
    text = refused.content[0].text  # type: ignore[union-attr]
    assert NAME not in text + json.dumps(refused.meta) and PHONE not in text
    async with Client(server(Guard(POLICY, mode="redact"), received)) as client:
        rewritten = await client.call_tool_mcp("team_handoff", LEAKY)
    assert not rewritten.isError
    assert received == [{"summary": f"[PERSON_NAME_1] ([PHONE_1]) can collect {PICKUP}.", "pickup_id": PICKUP}]


async def test_unknown_tools_may_be_hidden_and_results_pass_the_result_stage() -> None:
    scoped = Guard(POLICY, mode="redact")
    middleware_tools = {"visit_summary": {"purpose": "check the pickup", "sink": "record",
                                          "scope": {"atoms": ["pickup_id"]}}}
    async with Client(server(scoped, [], tools=middleware_tools)) as client:
        result = await client.call_tool_mcp("visit_summary", {"visit_id": "V-1"})
    shown = json.dumps(result.model_dump(mode="json"))
    assert PICKUP in shown and NAME not in shown and PHONE not in shown
    async with Client(server(Guard(POLICY, mode="enforce"), [], hide_unknown=True)) as client:
        names = {t.name for t in await client.list_tools()}
        hidden = await client.call_tool_mcp("visit_summary", {"visit_id": "V-1"})
    assert names == {"team_handoff"}
    assert hidden.isError and hidden.meta[META_KEY]["reason"] == "unknown_tool_hidden"  # type: ignore[index]


@pytest.mark.parametrize("mode", ["audit", "enforce", "redact"])
async def test_a_guard_error_fails_closed_or_passes_with_a_record_never_crashes(
        mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A conversion failing after the tool ran (its message quoting the result) and the catalog
    failing before: never a crash of the server, never a value in what the client or log sees."""
    from tpguard.adapters import _mcp_fastmcp

    def unreadable(_result: Any) -> Any:
        raise ValueError(f"cannot convert {RECORD}")

    monkeypatch.setattr(_mcp_fastmcp, "_as_json", unreadable)
    async with Client(server(Guard(POLICY, mode=mode), [])) as client:  # type: ignore[arg-type]
        after = await client.call_tool_mcp("visit_summary", {"visit_id": "V-1"})
    monkeypatch.undo()
    received: list[dict[str, Any]] = []
    app = server(Guard(POLICY, mode=mode), received)  # type: ignore[arg-type]

    def broken_catalog(_name: str) -> Any:
        raise KeyError(NAME)

    middleware = next(m for m in app.middleware if isinstance(m, GuardMiddleware))
    monkeypatch.setattr(middleware.catalog, "resolve", broken_catalog)
    async with Client(app) as client:
        before = await client.call_tool_mcp("team_handoff", {"summary": "ready", "pickup_id": PICKUP})
    shown = json.dumps(after.model_dump(mode="json")) + json.dumps(before.model_dump(mode="json"))
    if mode == "audit":  # the tool ran, its result unchanged; the error logged by type
        assert not after.isError and after.content[0].text == RECORD  # type: ignore[union-attr]
        assert not before.isError and received == [{"summary": "ready", "pickup_id": PICKUP}]
    else:
        for refused, kind in ((after, "ValueError"), (before, "KeyError")):
            assert refused.isError and refused.meta[META_KEY]["reason"] == "error"  # type: ignore[index]
            assert kind in refused.content[0].text  # type: ignore[union-attr]
        assert NAME not in shown and PHONE not in shown and received == []
    assert "internal error (ValueError)" in caplog.text and "internal error (KeyError)" in caplog.text
    assert NAME not in caplog.text
