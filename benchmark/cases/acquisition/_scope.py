"""The in-scope part of a case's substrate: every value an approved path inside ``E`` may read
(used by the ``disjoint`` and ``disclosure`` checks)."""

from __future__ import annotations

from .schema import AcqCase

__all__ = ["MARKER_PREFIX", "in_scope_texts"]

MARKER_PREFIX = "CONFIDENTIAL:"


def in_scope_texts(case: AcqCase) -> list[str]:
    """Values inside ``E``: E sources' rows of E subjects (E fields and the row keys), history in
    the window, E file parts, the directory when in ``E``; marked items excluded unless
    ``E.confidential``."""
    e, out = case.scope, []
    for src in e.sources:
        fields = set(e.fields.get(src, ())) | {"record_id", "subject", "name"}
        for row in case.substrate.records.get(src, ()):
            if row.get("subject") in e.subjects:
                out += [v for k, v in row.items() if k in fields]
    if "history" in e.sources:
        out += [ev.detail for ev in case.substrate.history
                if ev.subject in e.subjects and (e.window is None or e.window.contains(ev.date))]
    for path, parts in e.file_parts.items():
        spec = case.substrate.file(path)
        out += [": ".join(r) for p in parts for r in spec.part(p).rows]
    if "directory" in e.sources:
        out += [f"{p.id} {p.name} {p.role} {p.email} {p.phone}" for p in case.substrate.directory]
    if not e.confidential:
        out = [t for t in out if MARKER_PREFIX not in t]
    return out
