"""The tpguard benchmark, installed as ``tpguard.benchmark`` (extra ``bench``)."""

from __future__ import annotations

__all__: list[str] = []
