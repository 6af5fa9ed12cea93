"""Benchmark cases: the schema every suite produces, and the suites themselves."""

from __future__ import annotations

from .schema import (
    Binding,
    Case,
    EndStateCheck,
    GroundTruthCall,
    RequiredFact,
    Suite,
    Transition,
    WorkflowStage,
)

__all__ = [
    "Binding",
    "Case",
    "EndStateCheck",
    "GroundTruthCall",
    "RequiredFact",
    "Suite",
    "Transition",
    "WorkflowStage",
]
