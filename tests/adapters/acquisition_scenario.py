"""The acquisition scenario the framework loops share (issue 10, "Done when": what the model saw).

A records backend (real SQLite) holds three visits: two of patient P-1 (one carrying a
CONFIDENTIAL note) and one of P-2. ``query_records(fields="*", patient_id="")`` returns the rows it
is asked for as JSON — by default every patient and every field; ``read_chart(patient_id)`` returns
a whole chart document whose "Visit summary" holds a CONFIDENTIAL paragraph and whose "Billing"
section the task does not need. The task's minimum scope: P-1's name, phone and visit date, and the
chart's visit summary without confidential passages.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tpguard import AcquisitionScope, ScopeBinding

ROWS = [
    ("v1", "P-1", "Ann Lee", "415-555-0101", "2024-03-02", "asthma", ""),
    ("v2", "P-1", "Ann Lee", "415-555-0101", "2024-04-11", "anxiety", "CONFIDENTIAL: psychiatric referral"),
    ("v3", "P-2", "Bob Ray", "415-555-0102", "2024-03-05", "hepatitis B", ""),
]
COLUMNS = ("id", "patient", "name", "phone", "visit", "diagnosis", "notes")
CHART = ("Chart of P-1\n\n## Visit summary\nSeen for asthma; inhaler renewed.\n\n"
         "CONFIDENTIAL: disclosed a psychiatric history.\n\nFollow up in two weeks.\n"
         "## Billing\nCard on file ends 4417; balance 120 USD.\n")
OUT_OF_SCOPE = ("Bob Ray", "415-555-0102", "hepatitis B", "psychiatric", "anxiety", "4417")

SCOPES = {
    "query_records": AcquisitionScope(
        fields=["name", "phone", "visit"], subjects=["P-1"],
        binding=ScopeBinding(subject_arg="patient_id", subject_key="patient",
                             atom_keys={"phone": "phone"})),
    "read_chart": AcquisitionScope(
        subjects=["P-1"], parts=["Visit summary"],
        binding=ScopeBinding(fields_arg=None, subject_arg="patient_id", part_pattern=r"^## (?P<part>.+)$")),
}
PURPOSES = {"query_records": {"purpose": "look up the patient's visits", "sink": "record"},
            "read_chart": {"purpose": "read the patient's visit summary", "sink": "record"}}
# the narrowed request enforce/redact send, and the in-scope rows it returns
NARROWED = {"fields": "name, phone, visit", "patient_id": "P-1"}
IN_SCOPE = [{"id": "v1", "patient": "P-1", "name": "Ann Lee", "phone": "415-555-0101", "visit": "2024-03-02"},
            {"id": "v2", "patient": "P-1", "name": "Ann Lee", "phone": "415-555-0101", "visit": "2024-04-11"}]
REDACTED_CHART = ("Chart of P-1\n\n## Visit summary\nSeen for asthma; inhaler renewed.\n\n"
                  "[tpguard: confidential passage withheld]\n\nFollow up in two weeks.\n"
                  "[tpguard: part withheld - outside this task's scope]\n")


class Backend:
    """The records system: a real SQLite table, and a log of every request it received."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.received: list[tuple[str, dict[str, Any]]] = []
        with sqlite3.connect(path) as db:
            db.execute(f"CREATE TABLE visits ({', '.join(COLUMNS)})")
            db.executemany(f"INSERT INTO visits VALUES ({', '.join('?' * len(COLUMNS))})", ROWS)

    def query(self, fields: str = "*", patient_id: str = "") -> str:
        self.received.append(("query_records", {"fields": fields, "patient_id": patient_id}))
        wanted = [c.strip() for c in fields.split(",") if c.strip() in COLUMNS] if fields.strip() != "*" else []
        cols = ["id", "patient", *[c for c in wanted if c not in ("id", "patient")]] if wanted else list(COLUMNS)
        sql = f"SELECT {', '.join(cols)} FROM visits" + (" WHERE patient = ?" if patient_id else "")
        with sqlite3.connect(self.path) as db:
            rows = db.execute(sql + " ORDER BY id", (patient_id,) if patient_id else ()).fetchall()
        return json.dumps([dict(zip(cols, r, strict=True)) for r in rows])

    def chart(self, patient_id: str) -> str:
        self.received.append(("read_chart", {"patient_id": patient_id}))
        return CHART if patient_id == "P-1" else "no chart"
