"""Span attribute names: GenAI names from OpenTelemetry semconv, ``tpguard.*`` names here only.

OpenInference names are written out (its package is an optional extra); a test checks them against
``openinference.semconv`` when that package is installed.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Final

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _gen_ai
from opentelemetry.semconv.attributes import error_attributes as _error
from opentelemetry.semconv.attributes import service_attributes as _service


def _installed_version() -> str:
    """The package's version, read from its installed metadata (one source: ``pyproject.toml``);
    a source tree put on ``sys.path`` without being installed has none."""
    try:
        return _version("tpguard")
    except PackageNotFoundError:  # pragma: no cover - only a checkout that was never installed
        return "0+unknown"


TPGUARD_VERSION: Final = _installed_version()

#: the id of a guard's default session, the one a call outside any ``guard.session()`` runs in;
#: its spans carry no session id (here, below the stages, because spans and sessions both need it)
DEFAULT_SESSION_ID: Final = "default"

GEN_AI_OPERATION_NAME: Final = _gen_ai.GEN_AI_OPERATION_NAME
GEN_AI_OPERATION_EXECUTE_TOOL: Final = _gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value
GEN_AI_TOOL_NAME: Final = _gen_ai.GEN_AI_TOOL_NAME
GEN_AI_TOOL_CALL_ID: Final = _gen_ai.GEN_AI_TOOL_CALL_ID
GEN_AI_TOOL_DESCRIPTION: Final = _gen_ai.GEN_AI_TOOL_DESCRIPTION
GEN_AI_TOOL_TYPE: Final = _gen_ai.GEN_AI_TOOL_TYPE
GEN_AI_TOOL_CALL_ARGUMENTS: Final = _gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS
ERROR_TYPE: Final = _error.ERROR_TYPE

OPENINFERENCE_SPAN_KIND: Final = "openinference.span.kind"
OPENINFERENCE_TOOL_NAME: Final = "tool.name"
OPENINFERENCE_TOOL_DESCRIPTION: Final = "tool.description"
OPENINFERENCE_TOOL_PARAMETERS: Final = "tool.parameters"
OPENINFERENCE_TOOL_ID: Final = "tool.id"
OPENINFERENCE_INPUT_VALUE: Final = "input.value"
OPENINFERENCE_INPUT_MIME_TYPE: Final = "input.mime_type"

TPGUARD_PURPOSE: Final = "tpguard.purpose"
TPGUARD_SINK: Final = "tpguard.sink"
TPGUARD_MODE: Final = "tpguard.mode"
TPGUARD_DECISION: Final = "tpguard.decision"
TPGUARD_FORBIDDEN_ATOM_IDS: Final = "tpguard.forbidden.atom_ids"
TPGUARD_FORBIDDEN_ATOM_TYPES: Final = "tpguard.forbidden.atom_types"
TPGUARD_FORBIDDEN_FIELDS: Final = "tpguard.forbidden.fields"
TPGUARD_FINDING_COUNT: Final = "tpguard.finding.count"
#: the atom types of all findings of the call (authorized or not): sorted unique values
TPGUARD_FINDINGS_TYPES: Final = "tpguard.findings.types"
TPGUARD_FORBIDDEN_COUNT: Final = "tpguard.forbidden.count"
#: every finding of the call, deduplicated, as one compact JSON string (one attribute: a list
#: costs the SDK ~3x a string): ``[[atom_id, atom_type, path, method, free_text, authorized], …]``
#: — what ``tpguard audit`` scores from with default settings (no values, no events needed). Not
#: ``tpguard.findings``: a name that prefixes another (``tpguard.findings.types``) clashes in
#: backends that nest attributes by their dots (Phoenix)
TPGUARD_FINDINGS: Final = "tpguard.findings.table"
#: the column names of :data:`TPGUARD_FINDINGS`'s rows, in order (readers check the row width)
FINDINGS_COLUMNS: Final = ("atom_id", "atom_type", "path", "method", "free_text", "authorized")
#: how many ``tpguard.finding`` events were not added because of the per-span cap
TPGUARD_FINDING_EVENTS_DROPPED: Final = "tpguard.finding.events_dropped"
TPGUARD_SESSION_ID: Final = "tpguard.session.id"
TPGUARD_ARGUMENTS: Final = "tpguard.arguments"
TPGUARD_ARGUMENTS_MODE: Final = "tpguard.arguments.mode"
#: argument paths of the call's non-empty free-text slots (FTSlotRate from spans)
TPGUARD_FREE_TEXT_SLOTS: Final = "tpguard.free_text.slots"
TPGUARD_ERROR: Final = "tpguard.error"
TPGUARD_STEP: Final = "tpguard.step"

#: request-side acquisition scope (issue 10): dimensions and argument names narrowed or refused
TPGUARD_SCOPE_DIMENSIONS: Final = "tpguard.scope.dimensions"
TPGUARD_SCOPE_ARGUMENTS: Final = "tpguard.scope.arguments"
#: result stage (issue 10): what the tool returned, summarized without values
TPGUARD_RESULT_DECISION: Final = "tpguard.result.decision"
TPGUARD_RESULT_SCOPE_COUNT: Final = "tpguard.result.scope.count"
TPGUARD_RESULT_SCOPE_DIMENSIONS: Final = "tpguard.result.scope.dimensions"
TPGUARD_RESULT_FINDING_COUNT: Final = "tpguard.result.finding.count"
TPGUARD_RESULT_ATOM_IDS: Final = "tpguard.result.atom_ids"
TPGUARD_RESULT_ATOM_TYPES: Final = "tpguard.result.atom_types"
TPGUARD_RESULT_FORBIDDEN_ATOM_TYPES: Final = "tpguard.result.forbidden.atom_types"
TPGUARD_RESULT_ERROR: Final = "tpguard.result.error"
TPGUARD_RESULT_EVENTS_DROPPED: Final = "tpguard.result.events_dropped"
TPGUARD_RESULT_EVENT: Final = "tpguard.result.finding"
RESULT_DIMENSION: Final = "tpguard.scope.dimension"
RESULT_PATH: Final = "tpguard.path"
RESULT_DESCRIPTION: Final = "tpguard.description"

TPGUARD_FINDING_EVENT: Final = "tpguard.finding"
FINDING_ATOM_ID: Final = "tpguard.atom.id"
FINDING_ATOM_TYPE: Final = "tpguard.atom.type"
FINDING_PATH: Final = "tpguard.path"
FINDING_METHOD: Final = "tpguard.method"
FINDING_AUTHORIZED: Final = "tpguard.authorized"
FINDING_FREE_TEXT: Final = "tpguard.free_text"
FINDING_SEVERITY: Final = "tpguard.severity"
FINDING_START: Final = "tpguard.start"
FINDING_END: Final = "tpguard.end"

# -- run spans and resources (``agent_run_span`` / ``configure``) ---------------------------------
GEN_AI_OPERATION_INVOKE_AGENT: Final = _gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value
GEN_AI_AGENT_NAME: Final = _gen_ai.GEN_AI_AGENT_NAME
GEN_AI_AGENT_ID: Final = _gen_ai.GEN_AI_AGENT_ID
GEN_AI_CONVERSATION_ID: Final = _gen_ai.GEN_AI_CONVERSATION_ID
SERVICE_NAME: Final = _service.SERVICE_NAME
SERVICE_VERSION: Final = _service.SERVICE_VERSION
OPENINFERENCE_AGENT_NAME: Final = "agent.name"
OPENINFERENCE_SESSION_ID: Final = "session.id"
#: resource attribute: the Phoenix project a trace is filed under (``configure`` sets the service name)
OPENINFERENCE_PROJECT_NAME: Final = "openinference.project.name"
TPGUARD_RUN_ID: Final = "tpguard.run.id"
TPGUARD_CASE_ID: Final = "tpguard.case.id"

#: feedback after a block (issue 31): the adapter rewrote the blocked call in the agent's memory
TPGUARD_CALL_REWRITTEN_EVENT: Final = "tpguard.call_rewritten"
REWRITE_WHERE: Final = "tpguard.rewrite.where"
REWRITE_PATHS: Final = "tpguard.rewrite.paths"
REWRITE_ATOM_TYPES: Final = "tpguard.rewrite.atom_types"
#: ``Guard(escalate=...)``: a repeated refused call decided in the escalation mode
TPGUARD_ESCALATED_EVENT: Final = "tpguard.escalated"
ESCALATION_FROM: Final = "tpguard.escalation.from"
ESCALATION_TO: Final = "tpguard.escalation.to"
