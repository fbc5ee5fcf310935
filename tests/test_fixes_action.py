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
