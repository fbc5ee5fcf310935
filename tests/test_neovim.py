"""A real editor against `evallint server`: headless Neovim attaches its built-in LSP client.

tests/neovim_client.lua drives Neovim: it opens a judge prompt that shows the judge the
generator's system prompt (EL102, which has no automatic fix) and a judge agent without a tools
allow-list (EL402, which has a safe one), applies the agent's quick fix through
``vim.lsp.buf.code_action`` and waits for the diagnostics to clear, then writes what it saw as
JSON for the assertions here. Needs ``nvim`` (Debian's ``neovim`` package; .ci/run installs it
when missing) and the ``server`` extra (pygls).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(
    NVIM is None, reason="Neovim is not installed (`apt-get install neovim`; .ci/run installs it)")

SCRIPT = Path(__file__).with_name("neovim_client.lua")
STEP_TIMEOUT_MS = 30_000  # each wait inside Neovim
TIMEOUT = 120.0  # the whole session; Neovim is killed past it

JUDGE = textwrap.dedent("""\
    You are the judge. Grade the reply against the task.

    Solver brief: {{ system_prompt }}

    Task: <task>{{ input }}</task>
    Reply: <reply>{{ output }}</reply>

    Answer as JSON: {"score": 0, "feedback": ""}
    """)
AGENT = textwrap.dedent("""\
    ---
    name: judge
    description: Scores the draft against the rubric.
    model: haiku
    ---
    You are the judge. Read the draft and score it.
    """)
FIXED_AGENT = AGENT.replace("model: haiku\n", "tools: Read, Grep, Glob\nmodel: haiku\n")


def _left_running(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (the server and its workers carry it)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker.encode() in (proc / "environ").read_bytes().split(b"\0"):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def _run_neovim(root: Path, out: Path, home: Path,
                marker: str) -> subprocess.CompletedProcess[str]:
    assert NVIM is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "XDG_"))}
    env.update({
        marker.split("=")[0]: marker.split("=")[1],
        "EVALLINT_NVIM_ROOT": str(root),
        "EVALLINT_NVIM_OUT": str(out),
        "EVALLINT_NVIM_CMD": json.dumps([sys.executable, "-m", "evallint", "server"]),
        "EVALLINT_NVIM_TIMEOUT": str(STEP_TIMEOUT_MS),
        # Neovim's own files (the LSP log, shada) stay inside the test's folder
        "HOME": str(home),
        **{f"XDG_{kind}_HOME": str(home / kind.lower())
           for kind in ("CONFIG", "DATA", "STATE", "CACHE")},
    })
    argv = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n",
            "-c", f"luafile {SCRIPT}", "-c", "cquit 4"]  # the script quits; this only if it broke
    proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # Neovim and the server it started
        stdout, stderr = proc.communicate()
        pytest.fail(f"Neovim did not finish in {TIMEOUT} s: {stderr[-3000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _codes(shown: list[dict[str, Any]]) -> list[str]:
    return [d["code"] for d in shown]


def test_neovim_gets_diagnostics_applies_a_quick_fix_and_sees_them_clear(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    root = tmp_path / "project"
    (root / "prompts").mkdir(parents=True)
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / "prompts" / "judge.j2").write_text(JUDGE, encoding="utf-8")
    agent = root / ".claude" / "agents" / "judge.md"
    agent.write_text(AGENT, encoding="utf-8")
    out = tmp_path / "observed.json"

    marker = f"EVALLINT_NVIM_SESSION={uuid.uuid4().hex}"
    done = _run_neovim(root, out, tmp_path / "home", marker)
    # nothing the session started outlives it: a worker left behind would hold the editor's
    # pipes open (Neovim 0.10+ waits for them before it calls the server stopped)
    deadline = time.monotonic() + 5
    while (left := _left_running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the session still running after Neovim exited: {left}"
    assert out.is_file(), f"Neovim wrote nothing (exit {done.returncode}): {done.stderr[-3000:]}"
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen["ok"], seen["error"]
    assert done.returncode == 0, done.stderr[-3000:]

    # the judge prompt: EL102 where the variable is, linked to the rule's page, no quick fix
    (el102,) = [d for d in seen["judge"]["shown"] if d["code"] == "EL102"]
    bad = JUDGE.splitlines().index("Solver brief: {{ system_prompt }}")
    assert (el102["lnum"], el102["col"]) == (bad, JUDGE.splitlines()[bad].index("system_prompt"))
    assert el102["source"] == "evallint" and "system_prompt" in el102["message"]
    href = urlsplit(seen["judge"]["href"])
    assert href.fragment == "el102"
    if href.scheme == "file":  # the rules page shipped with evallint
        page = Path(unquote(href.path))
        assert page.is_file() and "\n## EL102\n" in page.read_text(encoding="utf-8")
    assert seen["judge"]["quick_fixes"] == []
    assert "EL102" in _codes(seen["judge"]["still"])  # nothing fixed it

    # the judge agent: EL402, its safe fix chosen from the code actions, then clean
    assert "EL402" in _codes(seen["agent"]["before"])
    assert any("EL402" in t and "tools: Read, Grep, Glob" in t for t in seen["agent"]["offered"])
    assert "\n".join(seen["agent"]["lines"]) + "\n" == FIXED_AGENT
    assert "EL402" not in _codes(seen["agent"]["after"])
    assert seen["agent"]["published_version"] >= seen["agent"]["edited_version"]
    assert agent.read_text(encoding="utf-8") == FIXED_AGENT  # the editor saved the fix
    assert seen["steps"][-1] == "server stopped"
