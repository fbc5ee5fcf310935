"""The CLI contract: exit codes, formats, selection, config errors, `evallint rule`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evallint.cli import main
from tests.conftest import write_files

BAD_UTF8 = {"hex": "53636f72650a0aff6f75747075740a"}  # "Score\n\n\xffoutput\n"


def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        res = runner.invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    write_files(tmp_path, {"prompts/judge.j2": BAD_UTF8, "prompts/other.j2": BAD_UTF8})
    return tmp_path


def test_findings_exit_1_text_format(broken: Path) -> None:
    code, out, err = run(["check", "--no-cache"], broken)
    assert code == 1
    assert "prompts/judge.j2:3:1: EL901 not valid UTF-8" in out
    assert "Found 2 findings" in err


def test_missing_path_is_tool_error(tmp_path: Path) -> None:
    code, out, err = run(["check", "does-not-exist"], tmp_path)
    assert code == 2
    assert "does-not-exist: no such file or directory" in err
    assert out == ""


def test_no_files_matched_is_tool_error(tmp_path: Path) -> None:
    write_files(tmp_path, {"README.md": "# hello\n", "notes.txt": "nothing\n"})
    code, _, err = run(["check"], tmp_path)
    assert code == 2
    assert "no files to check" in err


def test_unknown_config_key_named(broken: Path) -> None:
    (broken / "pyproject.toml").write_text("[tool.evallint]\nselekt = ['EL1']\n")
    code, _, err = run(["check"], broken)
    assert code == 2
    assert "unknown key 'selekt'" in err
    assert "pyproject.toml" in err


def test_bad_option_exit_2(broken: Path) -> None:
    code, _, _ = run(["check", "--no-such-option"], broken)
    assert code == 2


def test_unknown_selector_exit_2(broken: Path) -> None:
    code, _, err = run(["check", "--select", "EL999"], broken)
    assert code == 2
    assert "EL999" in err


def test_ignore_by_code_prefix_and_name(broken: Path) -> None:
    for sel in ("EL901", "EL9", "unparsable-file"):
        code, out, err = run(["check", "--no-cache", "--ignore", sel], broken)
        assert code == 0, (sel, out, err)
        assert "All checks passed" in err


def test_json_format_fields(broken: Path) -> None:
    code, out, _ = run(["check", "--no-cache", "--output-format", "json"], broken)
    assert code == 1
    data = json.loads(out)
    assert {d["path"] for d in data} == {"prompts/judge.j2", "prompts/other.j2"}
    first = data[0]
    for key in ("code", "severity", "path", "line", "column", "message"):
        assert key in first
    assert first["severity"] == "error"


def test_github_format(broken: Path) -> None:
    _, out, _ = run(["check", "--no-cache", "--output-format", "github"], broken)
    assert out.splitlines()[0].startswith("::error file=prompts/judge.j2,line=3,col=1,")


def test_sarif_format_structure(broken: Path) -> None:
    _, out, _ = run(["check", "--no-cache", "--output-format", "sarif"], broken)
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert "EL901" in ids
    rule = rules[ids.index("EL901")]
    assert rule["help"]["text"] and rule["shortDescription"]["text"]
    res = run0["results"][0]
    assert res["ruleId"] == "EL901" and ids[res["ruleIndex"]] == "EL901"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "prompts/judge.j2"
    assert loc["region"]["startLine"] == 3


def test_output_file(broken: Path) -> None:
    code, out, _ = run(["check", "--no-cache", "-o", "report.json", "--output-format", "json"],
                       broken)
    assert code == 1 and out == ""
    assert json.loads((broken / "report.json").read_text())[0]["code"] == "EL901"


def test_exit_zero_and_fail_on(broken: Path) -> None:
    assert run(["check", "--no-cache", "--exit-zero"], broken)[0] == 0
    (broken / "evallint.toml").write_text('[severity]\nEL901 = "note"\n')
    code, out, _ = run(["check", "--no-cache"], broken)
    assert code == 0 and "EL901" in out  # notes are reported but never fail
    assert run(["check", "--no-cache", "--fail-on", "note"], broken)[0] == 1


def test_per_file_ignores(broken: Path) -> None:
    (broken / "evallint.toml").write_text('[per-file-ignores]\n"prompts/judge.j2" = ["EL9"]\n')
    code, out, _ = run(["check", "--no-cache"], broken)
    assert code == 1
    assert "judge.j2" not in out and "other.j2" in out


def test_rule_command(tmp_path: Path) -> None:
    code, out, _ = run(["rule", "EL901"], tmp_path)
    assert code == 0
    for heading in ("## What it does", "## Why is this bad", "## Example", "## Use instead"):
        assert heading in out
    code, out, _ = run(["rule", "unparsable-file"], tmp_path)
    assert code == 0 and out.startswith("EL901")
    code, out, _ = run(["rule", "--all"], tmp_path)
    assert code == 0 and "EL902" in out and "EL904" in out
    code, _, err = run(["rule", "EL000"], tmp_path)
    assert code == 2 and "unknown rule" in err


def test_statistics(broken: Path) -> None:
    code, out, _ = run(["check", "--no-cache", "--statistics"], broken)
    assert code == 1
    assert out.split() [:3] == ["2", "EL901", "unparsable-file"]


def test_python_m_entry_point_no_traceback(broken: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "evallint", "check", "--no-cache"],
                          cwd=broken, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr


def test_the_command_exits_with_its_status_and_every_byte_it_wrote(broken: Path) -> None:
    """``python -m evallint`` ends with ``os._exit`` after flushing (see ``cli.entry``): the
    status is the run's, and output written just before still arrives whole."""
    cmd = [sys.executable, "-m", "evallint"]
    found = subprocess.run([*cmd, "check", "--no-cache", "--output-format", "json"],
                           cwd=broken, capture_output=True, text=True, timeout=120)
    assert found.returncode == 1
    assert len(json.loads(found.stdout)) == 2  # the JSON arrived whole
    rules = subprocess.run([*cmd, "rule", "--all"], capture_output=True, text=True,
                           timeout=120)
    assert rules.returncode == 0 and len(rules.stdout) > 50_000 and "EL905" in rules.stdout
    usage = subprocess.run([*cmd, "check", "--no-such-option"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 2 and "No such option" in usage.stderr


def test_stdin_filename(tmp_path: Path) -> None:
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        res = runner.invoke(main, ["check", "--stdin-filename", "prompts/judge.j2"],
                            input=b"ok\n\xff\n")
        assert res.exit_code == 1
        assert "prompts/judge.j2:2:1: EL901" in res.stdout
        res = runner.invoke(main, ["check", "--stdin-filename", "README.md"], input=b"# hi\n")
        assert res.exit_code == 2 and "no files to check" in res.stderr
    finally:
        os.chdir(old)


def test_baseline_roundtrip(broken: Path) -> None:
    code, _, err = run(["check", "--no-cache", "--write-baseline", "base.json"], broken)
    assert code == 0 and "Wrote 2 baseline entries" in err
    code, out, err = run(["check", "--no-cache", "--baseline", "base.json"], broken)
    assert code == 0 and out == "" and "2 known findings in the baseline" in err
    # A new finding is still reported.
    write_files(broken, {"prompts/third.j2": BAD_UTF8})
    code, out, _ = run(["check", "--no-cache", "--baseline", "base.json"], broken)
    assert code == 1 and "prompts/third.j2" in out and "judge.j2" not in out


def test_bad_baseline_is_tool_error(broken: Path) -> None:
    (broken / "base.json").write_text("{not json")
    code, _, err = run(["check", "--no-cache", "--baseline", "base.json"], broken)
    assert code == 2 and "base.json:1: invalid baseline JSON" in err


def test_docs_rules_md_is_generated_from_the_rule_files() -> None:
    """docs/rules.md must match the rule YAML (regenerate: evallint rule --all
    --output-format markdown > docs/rules.md)."""
    from evallint.cli import rules_markdown
    from evallint.registry import load_rules

    docs = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
    assert docs.read_text(encoding="utf-8") == rules_markdown(list(load_rules().values()))


def test_show_files(broken: Path) -> None:
    write_files(broken, {"loop.py": "x = 1\n", "README.md": "# not checked\n"})
    code, out, _ = run(["check", "--show-files"], broken)
    assert code == 0
    assert out.splitlines() == ["loop.py\tpython", "prompts/judge.j2\tjinja",
                                "prompts/other.j2\tjinja"]


@pytest.mark.parametrize("args", [["check", "--show-files"], ["check", "--no-cache"]])
def test_a_reader_that_leaves_early_ends_the_run_quietly(args: list[str]) -> None:
    """``evallint check | head``: the pipe closes before the report is written. Like any
    command-line tool, evallint stops without a traceback or an "internal error" line."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    proc = subprocess.Popen([sys.executable, "-m", "evallint", *args, str(fixtures)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has written anything (it is still starting)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "internal error" not in err and "Traceback" not in err and "Broken pipe" not in err
