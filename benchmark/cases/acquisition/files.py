"""Task 3's files laid out as real DOCX, XLSX and PDF documents (seed ``001_*`` §3: "119 DOCX, 147
XLSX, and 30 PDF files that are parsed at run time using python-docx, openpyxl, and pypdf").

A :class:`~.schema.FileSpec` becomes one file: XLSX — one sheet per part, one row per part row
(openpyxl); DOCX — a title, then per part a Heading 1 and one paragraph per row, cells joined by
``": "`` (python-docx); PDF — one page per part, one line per row (fpdf2 lays out text; pypdf only
reads). Files live in a per-seed cache directory outside the repository
(``$TPGUARD_ACQ_CACHE`` or ``$XDG_CACHE_HOME/tpguard/acquisition``, else
``~/.cache/tpguard/acquisition``, then ``/<seed>``) under a name that carries a hash of their
spec, so a changed generator never reads a stale file. Writing is atomic (temp file + rename), so
concurrent runners may share the cache. Cost: ~5–20 ms per file, once per seed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from datetime import datetime
from pathlib import Path

from .schema import AcqCase, FileSpec

__all__ = ["default_files_dir", "ensure_files", "file_location"]

_EPOCH = datetime(2025, 1, 1)


def default_files_dir(seed: int) -> Path:
    base = os.environ.get("TPGUARD_ACQ_CACHE")
    if base:
        return Path(base) / str(seed)
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "tpguard" / "acquisition" / str(seed)


def file_location(spec: FileSpec, files_dir: Path) -> Path:
    """Where ``spec`` lives in ``files_dir`` (the name carries a hash of the spec)."""
    digest = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:12]
    return Path(files_dir) / f"{Path(spec.path).stem}-{digest}.{spec.kind}"


def _write_xlsx(spec: FileSpec, out: Path) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    for ws in list(wb.worksheets):  # drop the default sheet
        wb.remove(ws)
    for part in spec.parts:
        ws = wb.create_sheet(part.name)
        for row in part.rows:
            ws.append(list(row))
    wb.properties.creator = "tpguard"
    wb.properties.created = wb.properties.modified = _EPOCH
    wb.save(out)


def _write_docx(spec: FileSpec, out: Path) -> None:
    from docx import Document

    doc = Document()
    doc.add_heading(spec.title, level=0)
    for part in spec.parts:
        doc.add_heading(part.name, level=1)
        for row in part.rows:
            doc.add_paragraph(": ".join(row))
    props = doc.core_properties
    props.author, props.created, props.modified = "tpguard", _EPOCH, _EPOCH
    doc.save(str(out))


def _write_pdf(spec: FileSpec, out: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(orientation="L", format="A4")
    pdf.set_creation_date(_EPOCH)
    pdf.set_auto_page_break(False)
    for part in spec.parts:  # one page per part, one line per row (no wrapping: one row, one line)
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 11)
        pdf.cell(0, 8, spec.title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=8)
        for row in part.rows:
            pdf.cell(0, 6, ": ".join(row), new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(out))


_WRITERS = {"xlsx": _write_xlsx, "docx": _write_docx, "pdf": _write_pdf}


def ensure_files(case: AcqCase, files_dir: Path) -> dict[str, Path]:
    """Lay out the case's files in ``files_dir`` when missing; return ``{virtual path: file}``."""
    files_dir = Path(files_dir)
    out: dict[str, Path] = {}
    for spec in case.substrate.files:
        target = file_location(spec, files_dir)
        if not target.exists():
            files_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=files_dir, suffix=f".{spec.kind}.part")
            os.close(fd)
            try:
                _WRITERS[spec.kind](spec, Path(tmp))
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        out[spec.path] = target
    return out
