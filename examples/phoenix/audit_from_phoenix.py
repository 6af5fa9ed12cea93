"""Send an audit-mode guarded run to Phoenix, read its spans back through Phoenix's REST API, and
ask ``tpguard audit`` what enforce would have blocked.

    pip install arize-phoenix 'tpguard[otlp,bench]'
    phoenix serve                                      # UI and OTLP/HTTP on http://localhost:6006
    python examples/phoenix/audit_from_phoenix.py      # → project "tpguard-phoenix-example"
    python examples/phoenix/audit_from_phoenix.py --phoenix http://phoenix:6006 --out spans.json

The guard runs in ``audit`` mode with default span settings; the project name is the service
name (``OTEL_SERVICE_NAME`` or ``--project``). The spans are fetched with
``GET /v1/projects/{project}/spans`` (paged by ``next_cursor``) and saved in Phoenix's own format,
which ``tpguard audit --spans`` reads as it is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from tpguard import Guard
from tpguard.telemetry import agent_run_span, configure

POLICY = Path(__file__).resolve().parents[1] / "healthcare_policy.yaml"
#: three handoffs of one session: the second and third carry atoms the handoff may not receive
SUMMARIES = ["ready for pickup", "Maria Gonzalez (415) 555-0199 reports chest tightness",
             "call 415-555-0199"]


def send(phoenix: str, project: str) -> None:
    """One guarded session, exported over OTLP/HTTP to Phoenix's ``/v1/traces``."""
    provider = configure(service_name=project, endpoint=phoenix)
    guard = Guard(POLICY, mode="audit", tracer_provider=provider)
    with agent_run_span(provider, "pharmacy-agent", case_id="s1"), guard.session(session_id="s1"):
        for summary in SUMMARIES:
            with guard.intercept("team_handoff", {"pickup_id": "RX-88213", "summary": summary}):
                pass  # the real tool runs here: audit mode changes nothing
    provider.shutdown()  # flushes the batch to Phoenix


def fetch_spans(phoenix: str, project: str, *, expect: int = 0, timeout: float = 30.0) -> dict[str, Any]:
    """Every span of ``project`` from Phoenix's REST API (``{"data": [...], "next_cursor": null}``);
    waits up to ``timeout`` seconds for at least ``expect`` spans (Phoenix ingests asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        spans: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
            url = (f"{phoenix.rstrip('/')}/v1/projects/{urllib.parse.quote(project, safe='')}/spans?"
                   + urllib.parse.urlencode(query))
            try:
                with urllib.request.urlopen(url, timeout=10) as answer:
                    page = json.load(answer)
            except urllib.error.HTTPError as e:
                if e.code != 404 or time.monotonic() > deadline:  # (404: the project is not there yet)
                    raise
                page = {"data": [], "next_cursor": None}
            spans += page.get("data") or []
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if len(spans) >= expect or time.monotonic() > deadline:
            return {"data": spans, "next_cursor": None}
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phoenix", default="http://localhost:6006", help="Phoenix base URL")
    parser.add_argument("--project", default="tpguard-phoenix-example", help="Phoenix project")
    parser.add_argument("--out", default="phoenix_spans.json", help="where to save the spans")
    args = parser.parse_args()
    send(args.phoenix, args.project)
    spans = fetch_spans(args.phoenix, args.project, expect=len(SUMMARIES) + 1)
    Path(args.out).write_text(json.dumps(spans), encoding="utf-8")
    print(f"{len(spans['data'])} spans of project {args.project} saved to {args.out}")
    subprocess.run([sys.executable, "-m", "tpguard.cli", "audit", "--policy", str(POLICY),
                    "--spans", args.out], check=True)


if __name__ == "__main__":
    main()
