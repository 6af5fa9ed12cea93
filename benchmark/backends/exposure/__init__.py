"""The exposure suite's executable tools and the hook points a guard uses (seed ``002_*`` §3.2)."""

from __future__ import annotations

from .environment import ChannelObservation, ExpEnvironment, payload_text
from .gateway import ExpGateway
from .wraps import REDACTED, OracleRedaction, ReturnMin, SessionWrap

__all__ = ["REDACTED", "ChannelObservation", "ExpEnvironment", "ExpGateway", "OracleRedaction",
           "ReturnMin", "SessionWrap", "payload_text"]
