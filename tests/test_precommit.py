"""The pre-commit hook, through `pre-commit try-repo` as a user would run it.

pre-commit builds its own environment from this repository (a pip install from the package
registry), so this is slow: it runs when EVALLINT_SLOW_TESTS=1 (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_files

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not os.environ.get("EVALLINT_SLOW_TESTS") or shutil.which("git") is None,
    reason="slow: set EVALLINT_SLOW_TESTS=1",
)

CLEAN_JUDGE = """---
step: evaluator
model: claude-haiku-4-5
---
## System
You are a strict grader. Reply with JSON: {"score": 0.0, "feedback": "..."}.

## User
<input>{{input}}</input>
<output>{{output}}</output>
"""


def _repo(root: Path, judge: str) -> None:
    write_files(root, {"prompts/judge.prompt.md": judge})
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _try_repo(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    # the result cache's key in the test's own folder, never the user's
    env = dict(os.environ, PRE_COMMIT_HOME=str(home),
               EVALLINT_CACHE_KEY=str(home.parent / "evallint.key"))
    env.pop("EVALLINT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "evallint", "--all-files",
         "--verbose"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )


def test_hook_blocks_contaminated_and_passes_clean(tmp_path: Path) -> None:
    home = tmp_path / "pre-commit-home"
    bad = tmp_path / "bad"
    good = tmp_path / "good"
    _repo(bad, CLEAN_JUDGE.replace("<output>{{output}}</output>",
                                   "<output>{{output}}</output>\n{{system_prompt}}"))
    _repo(good, CLEAN_JUDGE)
    blocked = _try_repo(bad, home)
    assert blocked.returncode != 0, blocked.stdout + blocked.stderr
    assert "EL102" in blocked.stdout
    passed = _try_repo(good, home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 file checked." in passed.stdout  # the first run: nothing cached yet

    # The next commit is served from the result cache, which keeps the finding, stays out of
    # git's sight, and is read again only while the file is unchanged.
    again = _try_repo(bad, home)
    assert again.returncode != 0 and "EL102" in again.stdout, again.stdout + again.stderr
    assert "(1 from cache)" in again.stdout, again.stdout
    status = subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=bad,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
    (bad / "prompts/judge.prompt.md").write_text(CLEAN_JUDGE, encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=bad, check=True)
    fixed = _try_repo(bad, home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "from cache" not in fixed.stdout, fixed.stdout
