"""EL901 notes for notebook cells left out of the analysis because they do not parse, and for
files that are not Python by design (a notebook of another language, a scaffold template).

A notebook is not a module: IPython runs its cells one by one, so one broken cell (a draft, a
paste from a shell) does not make the others unreadable. The front-end skips such a cell and
analyses the rest; the skip is reported here, as a note, so that nobody takes the cell as
checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts import Pos
from evallint.findings import Finding, Severity
from evallint.kinds import FileKind
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, file_check


@file_check("EL901", kinds=(FileKind.NOTEBOOK, FileKind.PYTHON, FileKind.TYPESCRIPT,
                            FileKind.JAVASCRIPT))
def skipped_cells(facts: PythonFacts, ctx: Context) -> Iterator[Finding]:
    # a skipped cell is a note unless the configuration sets a severity for EL901
    if getattr(facts, "not_python", ""):
        yield ctx.finding("EL901", facts.path, Pos(1, 1), facts.not_python,
                          default=Severity.NOTE)
    for pos, msg in getattr(facts, "skipped_cells", ()):
        if pos.cell is None:  # a script: the part the grammar could not read
            yield ctx.finding(
                "EL901", facts.path, pos,
                f"{msg}; the statement there is left out of the analysis, the rest of the file "
                "is analysed", default=Severity.NOTE)
            continue
        yield ctx.finding(
            "EL901", facts.path, pos,
            f"cell {pos.cell} skipped: syntax error at line {pos.line}: {msg}; the other cells "
            "are analysed", default=Severity.NOTE)
