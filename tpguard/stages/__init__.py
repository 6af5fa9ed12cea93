"""The three stages of the information flow, each over the leaf table of what it reads.

* :mod:`.arguments` — what goes *into* a tool's arguments (ToolPrivacyBench, seed ``000_*``);
* :mod:`.results` — what a tool *returns* (PrivacyPeek's acquisition stage, seed ``001_*``);
* :mod:`.exits` — what a recipient *sees* at a visible exit (ASLEval, seed ``002_*``).

Each stage has the same shape, and the same names in its module (``X`` = ``call``, ``result``,
``exit``):

1. **inspect** — ``inspect_X(…) -> View``: walk → leaf table → findings, read once
   (:class:`~tpguard.detect._leaves.CallView`, :class:`.results.ResultView`,
   :class:`.exits.ExitView`); a problem (a limit, a cycle, an unreadable value) is part of the view;
2. **decide** — ``decide_X(view, …) -> Decision``: the action by mode — allow, block with a
   value-free message, or redact — from each finding's verdict: the policy's ``A`` for arguments
   (given here, from the session's memo or resolver), the acquisition scope for results and
   ``Auth(r, e)`` for exits (given while inspecting, one per atom);
3. **act** — the rewrite a ``redact`` decision carries: :func:`.arguments.rewrite_call`,
   :func:`.results.rebuild_filtered`, the exit's rewritten payload (results and exits build it
   while inspecting, where the texts they rewrote are at hand; ``build=`` says whether); a block
   withholds the payload and says why in ``Decision.message``.

``check_X(session, …)`` runs the three fail-safe — an internal error blocks in enforce/redact and
allows in audit, logged by type — and returns a :class:`tpguard.decision.Decision` whose ``stage``
says which; the guard (:mod:`tpguard.guard`) only finds the session and calls it. Every stage's
decision is recorded the same way: :func:`tpguard.decision.record_on` with the stage's renderer
(:func:`.arguments.record_call`, :func:`tpguard.telemetry.spans.record_result`,
:func:`.exits.record_exit_span`). The :class:`.session.Session` holds what a conversation has
learned (taint, provenance, exposures; its detector layers in :mod:`._layers`); ``feedback`` words
what an agent is told after a block.
"""
