"""Test helpers shipped with tpguard (scripted models, span capture). See the adapters' docs."""

from __future__ import annotations

from .spans import SpanCapture, capture_spans

__all__ = ["SpanCapture", "capture_spans"]
