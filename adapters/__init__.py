"""Framework adapters, installed as ``tpguard.adapters``: ``langchain`` and ``smolagents``.

Each adapter imports its framework only when used; install the matching extra
(``pip install "tpguard[langchain]"`` / ``"tpguard[smolagents]"``).
"""

from __future__ import annotations

__all__: list[str] = []
