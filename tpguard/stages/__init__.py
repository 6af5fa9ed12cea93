"""The three stages of the information flow, each over the leaf table of what it reads.

* :mod:`.arguments` — what goes *into* a tool's arguments (ToolPrivacyBench, seed ``000_*``);
* :mod:`.results` — what a tool *returns* (PrivacyPeek's acquisition stage, seed ``001_*``);
* :mod:`.exits` — what a recipient *sees* at a visible exit (ASLEval, seed ``002_*``).

Each stage inspects (walk → leaf table → findings), decides (a verdict per finding against the
session's policy) and acts (allow, block, or rewrite to placeholders), and returns a
:class:`tpguard.decision.Decision`. The :class:`.session.Session` holds what a conversation has
learned (taint, provenance, exposures); ``feedback`` words what an agent is told after a block.
"""
