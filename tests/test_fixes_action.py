"""The GitHub Action at the repository root: a composite action that runs `evallint check`
with SARIF output and uploads the report."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_action_runs_check_with_sarif_and_uploads_it() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert 'evallint check --output-format sarif -o "$EVALLINT_SARIF"' in runs
    assert '"$ACTION_PATH"' in runs  # installs the action's own checkout
    assert "${{" not in runs  # inputs reach the scripts through env, never pasted in
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/setup-python@") for u in uses)
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert {"paths", "args", "sarif-file"} <= set(action["inputs"])
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)


def test_the_check_step_uses_the_config_input_over_the_tree_s_own(tmp_path: Path) -> None:
    """The check step's own script, run by bash as the runner runs it: with ``config`` set to
    a base-branch copy outside the checkout, a pull request's pyproject.toml that switches
    every rule off does not hide the finding."""
    import json
    import os
    import subprocess
    import sys

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    tree = tmp_path / "checkout"
    (tree / "prompts").mkdir(parents=True)
    (tree / "prompts" / "judge.j2").write_text(
        "You are a strict judge.\n<answer>{{ output }}</answer>\n{{ system_prompt }}\n")
    (tree / "pyproject.toml").write_text("[tool.evallint]\nignore = ['ALL']\n")
    base = tmp_path / "base.toml"
    base.write_text("select = ['EL1']\n")
    out = tmp_path / "github_output"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               EVALLINT_PATHS=".", EVALLINT_ARGS="", EVALLINT_SARIF="evallint.sarif",
               EVALLINT_CONFIG=str(base), GITHUB_OUTPUT=str(out))
    subprocess.run(["bash", "-c", step["run"]], cwd=tree, env=env, timeout=120)
    assert "exit-code=1" in out.read_text()
    results = json.loads((tree / "evallint.sarif").read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["EL102"]
    env["EVALLINT_CONFIG"] = ""  # without it, the tree's own config switches everything off
    subprocess.run(["bash", "-c", step["run"]], cwd=tree, env=env, timeout=120)
    assert out.read_text().splitlines()[-1] != "exit-code=1"
