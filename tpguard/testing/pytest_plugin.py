"""pytest plugin (registered through the ``pytest11`` entry point): the ``tpguard_spans`` fixture.

    def test_my_agent(tpguard_spans):
        guard = Guard(policy, mode="enforce", tracer_provider=tpguard_spans.provider)
        ...
        assert tpguard_spans.tool_spans("notify")[0].attributes["tpguard.decision"] == "block"
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .spans import SpanCapture, capture_spans


@pytest.fixture
def tpguard_spans() -> Iterator[SpanCapture]:
    """Spans captured in memory with deterministic ids; use ``.provider`` as tracer provider."""
    with capture_spans() as cap:
        yield cap
