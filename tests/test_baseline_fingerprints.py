"""Baselines and SARIF follow a finding by its fingerprint, not by its position: lines added
above or below leave every known finding known, a changed line or a new instance comes back,
a renamed file keeps its findings, and version-1 baselines still work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from evallint.cli import main
from evallint.findings import Finding
from evallint.fingerprint import Sources, fingerprints, normalise_message, without_own_name
from tests.conftest import write_files

REPO = Path(__file__).resolve().parents[1]
RAW_LOOP = (REPO / "fixtures/broken/python/raw_loop.py").read_text(encoding="utf-8")
JUDGE = (REPO / "fixtures/broken/templates/contaminated/judge.prompt.md").read_text(
    encoding="utf-8")
NOTEBOOK = (REPO / "fixtures/broken/python/refine_notebook.ipynb").read_text(encoding="utf-8")
UNRELATED = "def unrelated(values):\n    total = 0\n    for v in values:\n        total += v\n" \
            "    return total\n"


def check(root: Path, *args: str) -> tuple[int, str, str]:
    """``evallint check --no-cache ARGS`` run from ``root``: exit code, stdout, stderr."""
    old = Path.cwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["check", "--no-cache", *args])
    finally:
        os.chdir(old)
    assert "Traceback" not in res.output, res.output
    return res.exit_code, res.stdout, res.stderr


def found(root: Path, *args: str) -> list[dict[str, Any]]:
    code, out, err = check(root, "--output-format", "json", "-q", *args)
    assert code in (0, 1), err
    data: list[dict[str, Any]] = json.loads(out)
    return data


def tree(root: Path) -> Path:
    write_files(root, {"loop.py": RAW_LOOP, "prompts/judge.prompt.md": JUDGE})
    return root


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def move_everything(root: Path) -> None:
    """Blank lines and an unrelated function above and below the findings, a comment in the
    front matter, a blank line right above a flagged line."""
    loop = root / "loop.py"
    loop.write_text("# a header added later\n\n\n" + loop.read_text(encoding="utf-8")
                    + "\n\n" + UNRELATED, encoding="utf-8")
    edit(loop, "client = anthropic.Anthropic()\n",
         "client = anthropic.Anthropic()\n\n\n" + UNRELATED + "\n\n")
    edit(loop, "        verdict = judge(task, draft)\n", "\n        verdict = judge(task, draft)\n")
    judge = root / "prompts/judge.prompt.md"
    edit(judge, "---\nstep: evaluator\n", "---\n# reviewed in May\n\nstep: evaluator\n")
    edit(judge, "Problem:", "\n\nProblem:")


def test_lines_added_above_and_below_leave_every_finding_known(tmp_path: Path) -> None:
    root = tree(tmp_path)
    before = found(root)
    assert len(before) >= 10
    code, _out, err = check(root, "--write-baseline", "baseline.json")
    assert code == 0 and f"for {len(before)} findings" in err
    assert json.loads((root / "baseline.json").read_text())["version"] == 2
    move_everything(root)
    after = found(root)
    assert len(after) == len(before)
    assert [(a["code"], a["path"]) for a in after] == [(b["code"], b["path"]) for b in before]
    assert all(a["line"] != b["line"] for a, b in zip(after, before, strict=True))  # all moved
    code, out, err = check(root, "--baseline", "baseline.json")
    assert code == 0, out
    assert out == "" and f"{len(before)} known findings in the baseline" in err


def test_a_changed_line_comes_back_and_nothing_else(tmp_path: Path) -> None:
    root = tree(tmp_path)
    assert check(root, "--write-baseline", "baseline.json")[0] == 0
    move_everything(root)
    edit(root / "loop.py", 'out = open("results.jsonl", "w")', 'out = open("all.jsonl", "w")')
    new = found(root, "--baseline", "baseline.json")
    assert [(f["code"], f["path"]) for f in new] == [("EL505", "loop.py")]


def test_a_second_identical_violation_comes_back_alone(tmp_path: Path) -> None:
    """``last_attempt`` copied: its findings equal the original's in code, message and line
    text; the counter tells them apart and only the new ones are reported."""
    root = tree(tmp_path)
    known = found(root)
    assert check(root, "--write-baseline", "baseline.json")[0] == 0
    start = RAW_LOOP.index("def last_attempt(")
    copy = RAW_LOOP[start:].replace("def last_attempt(", "def last_attempt_again(")
    loop = root / "loop.py"
    loop.write_text("# moved down\n\n" + RAW_LOOP + "\n\n" + copy, encoding="utf-8")
    first_copied_line = RAW_LOOP.count("\n") + 5
    new = found(root, "--baseline", "baseline.json")
    originals = [f for f in known if f["line"] >= RAW_LOOP[:start].count("\n") + 1]
    assert {f["code"] for f in originals} == {"EL201", "EL502"}
    assert sorted(f["code"] for f in new) == sorted(f["code"] for f in originals)
    assert all(f["path"] == "loop.py" and f["line"] >= first_copied_line for f in new)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t",
                    "-C", str(root), *args], check=True, capture_output=True)


def test_a_renamed_file_keeps_its_findings_a_copy_does_not(tmp_path: Path) -> None:
    root = tree(tmp_path)
    write_files(root, {".gitignore": "baseline.json\n.evallint_cache/\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    in_loop = len([f for f in found(root) if f["path"] == "loop.py"])
    assert check(root, "--write-baseline", "baseline.json")[0] == 0

    shutil.copy(root / "loop.py", root / "copy_of_loop.py")  # the old file stays
    new = found(root, "--baseline", "baseline.json")
    assert len(new) == in_loop and {f["path"] for f in new} == {"copy_of_loop.py"}
    (root / "copy_of_loop.py").unlink()

    (root / "agents").mkdir()
    _git(root, "mv", "loop.py", "agents/refine_loop.py")
    _git(root, "mv", "prompts/judge.prompt.md", "prompts/strict_judge.prompt.md")
    code, out, err = check(root, "--baseline", "baseline.json")
    assert code == 0 and out == "", out
    _git(root, "commit", "-qm", "move")  # committed, as in a pull request: the tree decides
    move_everything_at = root / "agents/refine_loop.py"
    move_everything_at.write_text("\n\n" + move_everything_at.read_text(), encoding="utf-8")
    code, out, err = check(root, "--baseline", "baseline.json")
    assert code == 0 and out == "", out
    assert "known findings in the baseline" in err


def test_a_version_1_baseline_is_applied_as_before_with_a_note(tmp_path: Path) -> None:
    root = tree(tmp_path)
    entries: dict[tuple[str, str, str], int] = {}
    for f in found(root):
        key = (str(f["code"]), str(f["path"]), str(f["message"]))
        entries[key] = entries.get(key, 0) + 1
    doc = {"version": 1, "findings": [{"code": c, "path": p, "message": m, "count": n}
                                      for (c, p, m), n in sorted(entries.items())]}
    (root / "baseline.json").write_text(json.dumps(doc, indent=2))
    code, out, err = check(root, "--baseline", "baseline.json")
    assert code == 0 and out == ""
    assert "version 1" in err and "--write-baseline" in err
    move_everything(root)  # version 1 matches messages, positions included: as it always did
    code, out, _err = check(root, "--baseline", "baseline.json")
    assert code == 1 and "loop.py" in out


def _sarif_prints(root: Path) -> list[tuple[str, int, str]]:
    code, out, _ = check(root, "--output-format", "sarif")
    assert code == 1
    results = json.loads(out)["runs"][0]["results"]
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["partialFingerprints"]["evallint/v1"]) for r in results]


def test_sarif_fingerprints_survive_moves_and_tell_lines_apart(tmp_path: Path) -> None:
    root = tree(tmp_path)
    before = _sarif_prints(root)
    assert len({fp for _, _, fp in before}) == len(before)  # every result its own
    judge_calls = [(line, fp) for rule, line, fp in before if rule == "EL201"]
    assert len(judge_calls) == 2  # the same line text, the same message but for positions
    assert judge_calls[0][0] != judge_calls[1][0] and judge_calls[0][1] != judge_calls[1][1]
    move_everything(root)
    after = _sarif_prints(root)
    assert sorted(fp for _, _, fp in after) == sorted(fp for _, _, fp in before)
    assert sorted(line for _, line, _ in after) != sorted(line for _, line, _ in before)


def test_a_notebook_keeps_its_findings_when_a_cell_is_added_above(tmp_path: Path) -> None:
    write_files(tmp_path, {"refine.ipynb": NOTEBOOK})
    before = found(tmp_path)
    assert before and all(f["cell"] for f in before)
    assert check(tmp_path, "--write-baseline", "baseline.json")[0] == 0
    nb = json.loads(NOTEBOOK)
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": ["import os\n", "print(os.getcwd())\n"]})
    (tmp_path / "refine.ipynb").write_text(json.dumps(nb, indent=1))
    assert {f["cell"] for f in found(tmp_path)} != {f["cell"] for f in before}
    code, out, _err = check(tmp_path, "--baseline", "baseline.json")
    assert code == 0 and out == ""


def _insert_at_top(path: Path) -> None:
    """Lines at the top of a file, where its format allows them: a comment inside front
    matter, blank lines before JSON, a comment in Python and YAML, blank lines elsewhere."""
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = "---\n# reviewed\n\n" + text[4:]
    elif path.suffix in (".py", ".yaml", ".yml"):
        text = "# reviewed\n\n\n" + text
    else:
        text = "\n\n\n" + text
    path.write_text(text, encoding="utf-8")


def test_the_fixtures_demo_survives_lines_inserted_at_the_top(tmp_path: Path) -> None:
    """README: after lines are added at the top of every flagged file of ``fixtures/``, a
    baseline written before still knows every finding."""
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    before = found(tmp_path, "fixtures")
    assert len(before) > 50
    assert check(tmp_path, "fixtures", "--write-baseline", "baseline.json")[0] == 0
    for path in sorted({str(f["path"]) for f in before}):
        _insert_at_top(tmp_path / path)
    after = found(tmp_path, "fixtures")
    assert len(after) == len(before)
    assert sum(a["line"] != b["line"] for a, b in zip(after, before, strict=True)) > 50
    code, out, err = check(tmp_path, "fixtures", "--baseline", "baseline.json")
    assert code == 0 and out == "", out
    assert f"{len(before)} known findings" in err


# ------------------------------------------------------------------------------- the parts


def test_messages_lose_their_positions_and_keep_their_names() -> None:
    cases = {
        "generator output (generated at raw_loop.py:38) reaches the evaluator call `judge()` "
        "at raw_loop.py:39 as `answer`":
            "generator output (generated at raw_loop.py:#) reaches the evaluator call `judge()` "
            "at raw_loop.py:# as `answer`",
        "refinement loop at refine_notebook.ipynb:cell 3:3 calls the generator":
            "refinement loop at refine_notebook.ipynb:cell #:# calls the generator",
        "the judge model gpt-4o-mini is also a model under test (line 8)":
            "the judge model gpt-4o-mini is also a model under test (line #)",
        "cell 3 skipped: syntax error at line 2: invalid syntax":
            "cell # skipped: syntax error at line #: invalid syntax",
        'invalid YAML: mapping values\n  in "<unicode string>", line 3, column 5:':
            'invalid YAML: mapping values in "<unicode string>", line #, column #:',
        "not valid UTF-8 (byte 0xff at offset 12)": "not valid UTF-8 (byte 0xff at offset #)",
        "default of `model` in `llm_call()` (shared_llm.py:9)":
            "default of `model` in `llm_call()` (shared_llm.py:#)",
    }
    for message, expected in cases.items():
        assert normalise_message(message) == expected
    kept = ("runs on `claude-3-5-sonnet`, gpt-4o, openai:gpt-4.1, ollama:qwen2.5:7b; EL201; "
            "max_attempts is 25, outside 1–10; stratification counts sum to 40")
    assert normalise_message(kept) == kept
    assert without_own_name("at raw_loop.py:# and (raw_loop.py:#), not my_raw_loop.py:#",
                            "src/raw_loop.py") == \
        "at <file>:# and (<file>:#), not my_raw_loop.py:#"


def test_a_file_outside_the_roots_or_unreadable_gets_a_fingerprint_from_the_rest(
        tmp_path: Path) -> None:
    outside = tmp_path / "home" / "secret.py"
    write_files(tmp_path, {"home/secret.py": "TOKEN = 'x'\n", "repo/a.py": "TOKEN = 'x'\n"})
    (tmp_path / "repo" / "link.py").symlink_to(outside)
    roots = (os.path.realpath(tmp_path / "repo"),)
    src = Sources(roots=roots)
    assert src.line(str(tmp_path / "repo" / "a.py"), 1) == "TOKEN = 'x'"
    assert src.line(str(tmp_path / "repo" / "link.py"), 1) is None
    assert src.line(str(tmp_path / "repo" / "gone.py"), 1) is None
    assert Sources(max_bytes=4, roots=roots).line(str(tmp_path / "repo" / "a.py"), 1) is None
    f = Finding("EL102", "m", str(tmp_path / "repo" / "link.py"), 1, 1)
    g = Finding("EL102", "m", str(tmp_path / "repo" / "link.py"), 2, 1)
    p, q = fingerprints([f, g], src)
    assert p.context.startswith("-:") and p.value != q.value


def test_a_version_2_baseline_of_another_kind_or_malformed_is_an_error(tmp_path: Path) -> None:
    root = tree(tmp_path)
    assert check(root, "--write-baseline", "baseline.json")[0] == 0
    doc = json.loads((root / "baseline.json").read_text())
    assert doc["fingerprint"] == "evallint/v1" and all(
        set(e) == {"code", "path", "message", "context", "fingerprint", "count"}
        for e in doc["findings"])
    (root / "other.json").write_text(json.dumps({**doc, "fingerprint": "SECRET-KIND/v9"}))
    code, _out, err = check(root, "--baseline", "other.json")
    assert code == 2 and "--write-baseline" in err and "SECRET-KIND" not in err
    doc["findings"][0].pop("context")
    (root / "broken.json").write_text(json.dumps(doc))
    code, _out, err = check(root, "--baseline", "broken.json")
    assert code == 2 and "malformed entry number 1" in err
