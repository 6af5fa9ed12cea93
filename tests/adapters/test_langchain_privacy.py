"""Privacy beside the guard, for LangChain (issue 28): the middleware's own hook runs in a
LangSmith trace carry no payload (``trace_policy``), and ``exits=True`` covers what an agent
streams (``stream_mode="messages"``, and the v3 ``stream_events`` messages projection) — real
``create_agent`` loops, a scripted model and a token-streaming one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
import langsmith
from exposure_scenario import ANSWER, FORBIDDEN, POLICY, PURPOSE, SESSION, Records
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langsmith.run_helpers import tracing_context

from tpguard import Guard, PolicyKB
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing.langchain import ScriptedChatModel

USER = {"messages": [{"role": "user", "content": "When was I last seen?"}]}
SCRIPT = [[{"name": "query_records", "args": {"patient_id": "P-1"}, "id": "q1"}], ANSWER]
NOTE_POLICY = PolicyKB.from_dict({"atoms": [{"id": "bob.dx", "type": "diagnosis", "value": "hepatitis B"}]})


class CapturingClient(langsmith.Client):
    """A LangSmith client that keeps every run it is sent (inputs and outputs) instead of posting."""

    def __init__(self) -> None:
        super().__init__(api_key="test", api_url="http://127.0.0.1:9", auto_batch_tracing=False)
        self.sent: dict[str, dict[str, Any]] = {}

    def create_run(self, name: str, inputs: Any, run_type: str, *args: Any, **kw: Any) -> None:  # type: ignore[override]
        self.sent.setdefault(str(kw.get("id")), {"name": name, "payloads": []})["payloads"].append(inputs)

    def update_run(self, run_id: Any, **kw: Any) -> None:  # type: ignore[override]
        run = self.sent.setdefault(str(run_id), {"name": kw.get("name"), "payloads": []})
        run["payloads"] += [kw.get("inputs"), kw.get("outputs")]

    def hook_runs(self) -> dict[str, list[Any]]:
        return {r["name"]: r["payloads"] for r in self.sent.values()
                if str(r["name"]).startswith("PurposeBoundMiddleware")}


def note_agent(guard: Guard) -> Any:
    @tool
    def note(text: str) -> str:
        """Write a note."""
        return "saved"

    model = ScriptedChatModel([[{"name": "note", "args": {"text": "Bob has hepatitis B"}, "id": "c1"}],
                               "Done."])
    return create_agent(model, tools=[note], middleware=[
        PurposeBoundMiddleware(guard, tools={"note": {"sink": "comment", "free_text": ["text"]}}, exits=True)])


@pytest.mark.parametrize("mode", ["audit", "enforce", "redact"])
def test_hook_runs_in_a_langsmith_trace_carry_no_argument_payload(mode: str) -> None:
    client = CapturingClient()
    with tracing_context(enabled=True, client=client):
        note_agent(Guard(NOTE_POLICY, mode=mode)).invoke(USER)  # type: ignore[arg-type]
    hooks = client.hook_runs()
    assert {"PurposeBoundMiddleware_1.wrap_tool_call", "PurposeBoundMiddleware_1.wrap_model_call"} <= {
        n.replace(n.split(".")[0], "PurposeBoundMiddleware_1") for n in hooks}
    for name, payloads in hooks.items():
        assert "hepatitis" not in str(payloads), name
        assert all(p in (None, {}) for p in payloads), name  # the span and its timing, no payload


def test_with_raw_recording_the_hook_runs_are_traced_as_langchain_does(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = Guard(NOTE_POLICY, mode="audit", record_arguments="raw", allow_raw_arguments=True)
    assert PurposeBoundMiddleware(guard).trace_policy is None
    assert PurposeBoundMiddleware(Guard(NOTE_POLICY, record_arguments="redacted")).trace_policy is not None


# -- streamed output ---------------------------------------------------------------------------------
def scripted_agent(guard: Guard, tmp_path: Path, *, exits: bool = True) -> Any:
    records = Records(tmp_path / "records.sqlite")

    @tool
    def query_records(patient_id: str) -> str:
        """Look up a patient's visits."""
        return records.query(patient_id)

    return create_agent(ScriptedChatModel(SCRIPT), tools=[query_records], middleware=[
        PurposeBoundMiddleware(guard, tools={"query_records": PURPOSE}, exits=exits)])


def streaming_agent(guard: Guard, *, exits: bool = True) -> Any:
    """A model that streams its answer token by token (``GenericFakeChatModel``)."""
    model = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))
    return create_agent(model, tools=[], middleware=[PurposeBoundMiddleware(guard, exits=exits)])


def ai_text(events: list[Any]) -> str:
    """The text of every AI message (or chunk) the ``messages`` stream carried."""
    return "".join(str(m.content) for m, _ in events if isinstance(m, AIMessage))


@pytest.mark.parametrize("mode", ["enforce", "redact"])
@pytest.mark.parametrize("kind", ["scripted", "streaming"])
def test_the_messages_stream_carries_the_guarded_answer(mode: str, kind: str, tmp_path: Path) -> None:
    guard = Guard(POLICY, mode=mode)  # type: ignore[arg-type]
    agent = scripted_agent(guard, tmp_path) if kind == "scripted" else streaming_agent(guard)
    with guard.session(**SESSION):
        events = list(agent.stream(USER, stream_mode="messages"))
    text = ai_text(events)
    assert not [v for v in FORBIDDEN if v in text], text
    assert ("[DIAGNOSIS_1]" in text) if mode == "redact" else ("tpguard withheld" in text)


def test_the_async_messages_stream_carries_the_guarded_answer() -> None:
    import asyncio

    guard = Guard(POLICY, mode="redact")

    async def collect() -> list[Any]:
        return [e async for e in streaming_agent(guard).astream(USER, stream_mode="messages")]

    with guard.session(**SESSION):
        events = asyncio.run(collect())
    text = ai_text(events)
    assert "[DIAGNOSIS_1]" in text and not [v for v in FORBIDDEN if v in text], text


def test_without_exits_the_stream_is_token_by_token_and_unguarded() -> None:
    guard = Guard(POLICY, mode="enforce")
    with guard.session(**SESSION):
        raw = list(streaming_agent(guard, exits=False).stream(USER, stream_mode="messages"))
        guarded = list(streaming_agent(guard).stream(USER, stream_mode="messages"))
    assert "hepatitis B" in ai_text(raw) and len(raw) == 25  # the tokens, as the model made them
    assert len(guarded) == 1  # exits=True: one guarded message once the model is done


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_the_v3_messages_projection_carries_the_guarded_answer(mode: str) -> None:
    guard = Guard(POLICY, mode=mode)  # type: ignore[arg-type]
    with guard.session(**SESSION):
        run = streaming_agent(guard).stream_events(USER, version="v3")
        texts = [(list(stream.text), str(stream.output_message)) for stream in run.messages]
    assert texts and not [v for v in FORBIDDEN if v in str(texts)], texts
    assert ("[DIAGNOSIS_1]" if mode == "redact" else "tpguard withheld") in str(texts)


def test_astream_events_without_the_model_runs_own_events_carries_the_guarded_answer() -> None:
    """``astream_events`` reports every run, the model's own too (its raw tokens and output: not
    ours to guard, docs/langchain.md); ``exclude_tags=["nostream"]`` leaves the guarded one."""
    import asyncio

    guard = Guard(POLICY, mode="redact")

    async def collect(**kw: Any) -> str:
        return str([e async for e in streaming_agent(guard).astream_events(USER, version="v2", **kw)])

    with guard.session(**SESSION):
        everything = asyncio.run(collect())
        filtered = asyncio.run(collect(exclude_tags=["nostream"]))
    assert "hepatitis" in everything  # pinned: the model run's own events (see docs/langchain.md)
    assert "[DIAGNOSIS_1]" in filtered and not [v for v in FORBIDDEN if v in filtered]
