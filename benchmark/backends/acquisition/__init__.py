"""Executable tools of the acquisition suite (seed ``001_*`` §4 "Setup"): the eight tools over a
case's synthetic substrate, real DOCX/XLSX/PDF parsing at run time, every call and observation
logged."""

from __future__ import annotations

from ...cases.acquisition.files import default_files_dir, ensure_files
from .environment import AcqEnvironment, ObservationRecord, observation_text
from .gateway import AcqGateway

__all__ = ["AcqEnvironment", "AcqGateway", "ObservationRecord", "default_files_dir",
           "ensure_files", "observation_text"]
