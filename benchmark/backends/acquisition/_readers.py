"""Run-time parsing of Task 3's documents (seed ``001_*`` §3: parsed at run time with
python-docx, openpyxl and pypdf). Each reader returns ``{part name: [row, …]}`` for the requested
parts only — a narrow read never parses text it will not return (an XLSX sheet is read alone;
a DOCX is walked once; a PDF extracts only the requested pages)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ToolError

__all__ = ["page_numbers", "read_docx", "read_pdf", "read_xlsx"]


def _pick(available: list[str], wanted: str | None, what: str) -> list[str]:
    if wanted is None:
        return available
    for name in available:
        if name.casefold() == wanted.strip().casefold():
            return [name]
    raise ToolError(f"argument {what!r}: no such {what} (available: {', '.join(available)})")


def read_xlsx(path: Path, sheet: str | None) -> dict[str, list[list[str]]]:
    from openpyxl import load_workbook

    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        names = _pick(list(wb.sheetnames), sheet, "sheet")
        return {n: [["" if c is None else str(c) for c in row]
                    for row in wb[n].iter_rows(values_only=True)] for n in names}
    finally:
        wb.close()


def read_docx(path: Path, section: str | None) -> dict[str, list[str]]:
    from docx import Document

    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for para in Document(str(path)).paragraphs:
        style = para.style.name if para.style is not None else ""
        if style == "Heading 1":
            current = sections.setdefault(para.text, [])
        elif current is not None and para.text:
            current.append(para.text)
    names = _pick(list(sections), section, "section")
    return {n: sections[n] for n in names}


def page_numbers(pages: str | None, count: int) -> list[int]:
    """``"2"`` → ``[2]``, ``"1-2"`` / ``"1,3"`` → pages; ``None`` → every page (1-based)."""
    if pages is None:
        return list(range(1, count + 1))
    out: list[int] = []
    try:
        for chunk in str(pages).replace(" ", "").split(","):
            lo, _, hi = chunk.partition("-")
            out.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise ToolError("argument 'pages': expected a page like \"2\" or a range like \"1-2\"") \
            from None
    if not out or min(out) < 1 or max(out) > count:
        raise ToolError(f"argument 'pages': the file has pages 1-{count}")
    return out


def read_pdf(path: Path, pages: str | None) -> dict[str, list[str]]:
    from pypdf import PdfReader

    reader = PdfReader(path)
    return {str(n): reader.pages[n - 1].extract_text().splitlines()
            for n in page_numbers(pages, len(reader.pages))}
