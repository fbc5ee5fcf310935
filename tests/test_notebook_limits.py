"""A notebook's analysed code is bounded like a Python file's (max-file-size), and reading one
keeps only its code cells: the JSON is walked cell by cell, never decoded whole, so that a
notebook of many small cells cannot make a worker grow with its size on disk (issue: a 28 MB
notebook of 276,000 one-line cells)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from evallint.config import Config
from evallint.findings import Severity
from evallint.frontend import ParseError
from evallint.frontends import python_front
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.notebook import join_cells
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files
from tests.test_python_frontend import NB_LOOP, PY_CODES

LIMIT = 20_000


def small_cells(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"cell_type": "code", "source": [f"x{i} = {i}\n"]}
            for i in range(start, start + count)]


def as_cells(*cells: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"cell_type": kind, "metadata": {}, "source": src} for kind, src in cells]


def notebook(cells: list[dict[str, Any]]) -> str:
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5}, separators=(",", ":"))


def joined_size(cells: list[dict[str, Any]]) -> int:
    return len(join_cells(notebook(cells)).code.encode())


def test_a_notebook_whose_code_cells_pass_max_file_size_is_el901_naming_the_limit(
        tmp_path: Path) -> None:
    cells = as_cells(*NB_LOOP) + small_cells(3_000)
    assert joined_size(cells) > LIMIT
    assert len(notebook(cells)) < 16 * LIMIT  # the file is read: only its code is too big
    write_files(tmp_path, {"big.ipynb": notebook(cells),
                           "loop.ipynb": notebook(as_cells(*NB_LOOP))})
    run = lint_tree(tmp_path, PY_CODES, config={"max-file-size": LIMIT})
    found = [(f.path, f.code, f.cell, f.line) for f in run.findings]
    assert found == [("big.ipynb", "EL901", None, 1), ("loop.ipynb", "EL201", 2, 3)]
    [el901] = [f for f in run.findings if f.path == "big.ipynb"]
    assert el901.message.startswith("the notebook's code cells hold more than the 20,000-byte "
                                    "limit (max-file-size)")
    assert "not analysed" in el901.message


def test_a_notebook_of_the_same_shape_under_the_limit_is_analysed(tmp_path: Path) -> None:
    cells = small_cells(1_200) + as_cells(*NB_LOOP)
    assert 10_000 < joined_size(cells) <= LIMIT
    write_files(tmp_path, {"big.ipynb": notebook(cells)})
    run = lint_tree(tmp_path, PY_CODES, config={"max-file-size": LIMIT})
    # NB_LOOP's call is at line 3 of its second code cell, after the 1,200 small ones
    assert [(f.code, f.cell, f.line) for f in run.findings] == [("EL201", 1_202, 3)]


def test_the_limit_counts_the_joined_code_not_the_outputs() -> None:
    """Outputs are not code: a notebook with big outputs and little code is under the limit;
    the size is counted in UTF-8 bytes of the code as joined."""
    cells = as_cells(("code", "s = '" + "é" * 4_000 + "'\n"))  # 4,007 characters
    cells[0]["outputs"] = [{"output_type": "stream", "text": "x" * 50_000}]
    text = notebook(cells)
    assert join_cells(text, 8_007).code.startswith("s = ")
    with pytest.raises(ParseError, match="8,006-byte limit"):
        join_cells(text, 8_006)


def test_reading_stops_at_the_limit_before_the_rest_of_the_notebook() -> None:
    """The size is decided while the cells are read: whatever follows the cell that passes the
    limit is never read, so a notebook broken after it is still the size error (decoding the
    whole notebook first would report the JSON error instead)."""
    text = notebook(small_cells(3_000))
    broken = text[: text.index('"metadata":{"kernelspec"')] + '"metadata": {,,}, !!!'
    with pytest.raises(ParseError) as size:
        join_cells(broken, LIMIT)
    assert "max-file-size" in size.value.message
    with pytest.raises(ParseError) as invalid:
        join_cells(broken)  # no limit: the whole notebook is read and its JSON error found
    assert invalid.value.message.startswith("invalid notebook JSON")
    # the same with the breakage in a cell after the limit
    cells = small_cells(3_000)
    text = notebook(cells).replace('"x2999 = 2999\\n"', '"x" "y"', 1)
    assert text != notebook(cells)
    with pytest.raises(ParseError, match="max-file-size"):
        join_cells(text, LIMIT)
    with pytest.raises(ParseError, match="invalid notebook JSON"):
        join_cells(text)


@pytest.mark.parametrize("text", [
    '{"cells": [\n  {"cell_type": "code",,}\n]}',
    '{"cells": [{"cell_type": "code", "source": "x"} {"cell_type": "code"}]}',
    '{"cells": [1, 2,]}',
    '{"cells": [], }',
    '{"cells" [], }',
    '{"cells": [{"cell_type": "code", "source": "\x01"}]}',
    '{"cells": [], "metadata": {"kernelspec": {"language": "python",}}}',
    '{"cells": []} trailing',
    '\n\n  {"cells": [\n\n',
    '',
    '[1, 2',
    '{"cells": [{"cell_type": "code", "source": "x = 1"}], "nbformat": 4, "x": [1, {2: 3}]}',
])
def test_bad_json_is_reported_where_json_reports_it(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(ParseError) as got:
        join_cells(text)
    assert got.value.message == f"invalid notebook JSON: {expected.value.msg}"
    assert (got.value.line, got.value.column) == (expected.value.lineno, expected.value.colno)


@pytest.mark.parametrize("text, code, language", [
    ('{"cells": [{"cell_type": "code", "source": "a = 1"}], '
     '"cells": [{"cell_type": "code", "source": "b = 2"}]}', "b = 2\n", "python"),
    ('{"metadata": {"kernelspec": {"language": "R"}}, "metadata": {}, "cells": []}', "\n",
     "python"),
    ('{"metadata": {"kernelspec": {"language": " "}, "language_info": {"name": "Julia"}},'
     ' "cells": [{"cell_type": "raw", "source": "x"}, 3, {"cell_type": "code"}]}', "\n", "julia"),
    ('{"nbformat": 4}', "\n", "python"),
])
def test_the_notebook_reads_as_json_loads_would(text: str, code: str, language: str) -> None:
    """A later key replaces an earlier one, a missing ``cells`` is an empty notebook, a code
    cell without source is one empty line, non-code cells are left out."""
    joined = join_cells(text)
    assert (joined.code, joined.language) == (code, language)


@pytest.mark.parametrize("text", ['[{"cells": []}]', '{"cells": {"0": {}}}', '"cells"',
                                  '{"cells": [], "cells": 3}'])
def test_json_that_is_not_a_notebook_is_said_so(text: str) -> None:
    with pytest.raises(ParseError, match="not a Jupyter notebook"):
        join_cells(text)


BROKEN_AND_FINE = [cell for i in range(2_000)
                   for cell in (("code", f"def f{i}(:\n    pass\n"), ("code", f"y{i} = {i}\n"))]


def test_thousands_of_broken_cells_are_left_out_and_the_rest_analysed(tmp_path: Path) -> None:
    write_files(tmp_path, {"nb.ipynb": notebook(as_cells(*BROKEN_AND_FINE, *NB_LOOP))})
    run = lint_tree(tmp_path, PY_CODES)
    notes = [f for f in run.findings if f.code == "EL901"]
    assert all(f.severity == Severity.NOTE for f in notes)
    assert [f.cell for f in notes] == list(range(1, 4_000, 2))
    assert [(f.code, f.cell, f.line) for f in run.findings if f.code != "EL901"] == [
        ("EL201", 4_002, 3)]


def test_thousands_of_broken_cells_cost_a_few_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole code is parsed a few times, not once per broken cell (that was quadratic)."""
    text = notebook(as_cells(*BROKEN_AND_FINE, *NB_LOOP))
    whole: list[int] = []
    real_parse = ast.parse

    def parse(source: str, *args: Any, **kwargs: Any) -> ast.Module:
        if source.count("\n") > 1_000:
            whole.append(1)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(python_front.ast, "parse", parse)
    facts = python_front.parse_python(SourceFile(Path("nb.ipynb"), "nb.ipynb", text,
                                                 text.encode()), Config())
    assert isinstance(facts, PythonFacts) and facts.analyzed
    assert sorted(p.cell for p, _ in facts.skipped_cells) == list(range(1, 4_000, 2))
    assert 2 <= len(whole) <= 4


def test_one_broken_cell_is_still_reported_at_python_s_position(tmp_path: Path) -> None:
    cells = [*small_cells(50), *as_cells(("code", "x = 1\ndef judge(:\n"), *NB_LOOP)]
    write_files(tmp_path, {"nb.ipynb": notebook(cells)})
    findings = lint_tree(tmp_path, PY_CODES).findings
    assert [(f.code, f.cell, f.line) for f in findings] == [("EL901", 51, 2), ("EL201", 53, 3)]
    assert findings[0].message.startswith("cell 51 skipped: syntax error at line 2")


def test_positions_and_cells_of_a_long_notebook() -> None:
    joined = join_cells(notebook(
        [*small_cells(1_000), *as_cells(("code", "a = 1\nb = 2\n"), ("markdown", "# m"),
                                        ("code", "%%bash\nls\n"), ("code", "!ls\nc = 3"))]))
    assert len(joined.starts) == 1_003
    assert joined.pos(1, 0).cell == 1
    assert (joined.pos(1_002, 4).cell, joined.pos(1_002, 4).line) == (1_001, 2)
    assert joined.cell_code(1_001) == "a = 1\nb = 2\n"
    assert joined.cell_code(1_002) == "\n\n"  # a %% cell: every line empty
    assert joined.cell_code(1_003) == "pass\nc = 3\n"
    joined.blank(1_001)
    joined.blank(5)
    assert joined.cell_code(1_001) == "\n\n"
    assert joined.code.count("\n") == 1_000 + 2 + 2 + 2
    assert "\nx4 = 4\n" not in joined.code and "\nx5 = 5\n" in joined.code
    assert joined.code.endswith("\n\n\n\npass\nc = 3\n")
