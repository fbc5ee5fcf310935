"""A hostile tree and the filesystem around it: each test is one attack, made by a pull request
that `evallint check` runs on in CI, on a tree the test builds. Nothing outside the tree may be
read into the output, written or deleted; no run stalls, balloons or crashes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from evallint.cli import main
from tests.conftest import write_files

DIRTY_JUDGE = "You are a strict judge.\n<answer>{{ output }}</answer>\n{{ system_prompt }}\n"
SECRET = "TOP-SECRET-4471"


def check(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``evallint check ARGS`` run from ``root``: exit code, stdout, stderr."""
    old = Path.cwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["check", *args], env=env or {})
    finally:
        os.chdir(old)
    assert "Traceback" not in res.output, res.output
    return res.exit_code, res.stdout, res.stderr


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (symlinks not followed)."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            p = Path(dirpath) / name
            out[str(p.relative_to(folder))] = b"<link>" if p.is_symlink() else p.read_bytes()
    return out


def git_commit(root: Path) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(root)]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "pr"], check=True)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the tree, standing for the CI runner's home: an SSH key, a config."""
    home = tmp_path / "home"
    write_files(home, {".ssh/id_rsa": f"-----BEGIN KEY----- {SECRET}\n",
                       "ab/id_ed25519": f"{SECRET}\n", "notes/judge.j2": DIRTY_JUDGE + SECRET})
    return home


# ---------------------------------------------------------------------------------- 1: cache


@pytest.mark.parametrize("namespace", ["runs", "files", "index", "pyflow"])
def test_cache_folders_committed_as_symlinks_are_never_written_through(
        tmp_path: Path, outside: Path, namespace: str) -> None:
    """A PR commits ``.evallint_cache/v2/<namespace>`` as a symlink to a folder outside:
    check must not delete, write or read anything there; it checks the tree without cache."""
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE,
                       "app.py": "import anthropic\nclient = anthropic.Anthropic()\n"})
    (root / ".evallint_cache" / "v2").mkdir(parents=True)
    (root / ".evallint_cache" / "v2" / namespace).symlink_to(outside, target_is_directory=True)
    git_commit(root)
    before = snapshot(outside)
    for _ in range(2):
        code, out, err = check(root)
        assert code == 1 and "EL102" in out
        assert "result cache off" in err and namespace in err
    assert snapshot(outside) == before


def test_the_cache_version_folder_committed_as_a_symlink_turns_caching_off(
        tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    (root / ".evallint_cache").mkdir()
    (root / ".evallint_cache" / "v2").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    code, out, err = check(root)
    assert code == 1 and "EL102" in out and "result cache off" in err
    assert snapshot(outside) == before


def test_a_shard_folder_committed_as_a_symlink_is_not_followed(
        tmp_path: Path, outside: Path) -> None:
    """One level further down: ``v2/runs/ab -> ~/ab``, where a whole run's entry would go."""
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    assert check(root)[0] == 1
    runs = root / ".evallint_cache" / "v2" / "runs"
    for shard in list(runs.iterdir()):
        for f in shard.iterdir():
            f.unlink()
        shard.rmdir()
    for i in range(256):  # wherever the next key falls
        (runs / f"{i:02x}").symlink_to(outside / "ab", target_is_directory=True)
    (root / "prompts" / "judge.j2").write_text(DIRTY_JUDGE + "\n")  # a new run key
    before = snapshot(outside)
    for _ in range(2):
        code, out, _err = check(root)
        assert code == 1 and "EL102" in out
    assert snapshot(outside) == before


def test_planted_files_in_the_cache_folder_are_not_removed(tmp_path: Path) -> None:
    """Cache maintenance removes only what it made: packs and entries that authenticate
    under the user's key. A planted pack and a planted one-entry file stay."""
    from evallint import cache

    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    assert check(root)[0] == 1
    v2 = root / ".evallint_cache" / "v2"
    planted_pack = v2 / "files" / "pack-00000000000000000000-planted.bin"
    planted_pack.write_bytes(cache.PACK_MAGIC + b"0" * 80)
    shard = next((v2 / "runs").iterdir())
    planted_entry = shard / (shard.name + "f" * 62)
    planted_entry.write_bytes(cache.MAGIC + b"0" * 64 + b"\n{}")
    for i in range(cache.MAX_PACKS + 2):  # enough runs to merge the packs
        (root / "prompts" / "judge.j2").write_text(DIRTY_JUDGE + f"{i}\n")
        assert check(root)[0] == 1
    assert planted_pack.exists() and planted_entry.exists()
    assert len([p for p in (v2 / "files").iterdir()]) <= cache.MAX_PACKS + 1


# ------------------------------------------------------------------------ 2: a shared cache


def test_a_shared_cache_folder_never_answers_for_another_project(tmp_path: Path) -> None:
    """Two projects, one EVALLINT_CACHE_DIR: the same config text at the same relative path
    names a template that is clean in A and leaks the generator's reasoning in B."""
    config = ("pair_judge:\n  prompt_template: \"pair_judge/prompt.txt\"\n"
              "  fn_completions: \"openai_completions\"\n"
              "  completions_kwargs:\n    model_name: \"gpt-4o-mini\"\n"
              "  fn_completion_parser: \"ranking_parser\"\n")
    clean = ("You are a judge. Pick the better answer to {instruction}.\nAnswer 1:\n"
             '"""{output_1}"""\nAnswer 2:\n"""{output_2}"""\nReply with model_1 or model_2.\n')
    dirty = clean.replace("Answer 1:", "How model_1 reasoned: {chain_of_thought}\nAnswer 1:")
    shared = {"EVALLINT_CACHE_DIR": str(tmp_path / "shared-cache")}
    for name, template in (("a", clean), ("b", dirty)):
        write_files(tmp_path / name, {"annotator_configs/configs.yaml": config,
                                      "annotator_configs/pair_judge/prompt.txt": template})
    assert check(tmp_path / "a", env=shared)[0] == 0
    code, out, _ = check(tmp_path / "b", env=shared)
    assert code == 1 and "EL102" in out and "chain_of_thought" in out
    assert check(tmp_path / "a", env=shared)[0] == 0  # and back: A is still clean


# ------------------------------------------------------------------- 3: a lock file's pins


def test_a_lock_file_pinning_outside_paths_leaks_nothing(tmp_path: Path, outside: Path) -> None:
    """``evallint.lock`` pins an absolute path, a path up and out, a symlink out, and a
    kernel file that never ends: each is a finding that names it, with no digest."""
    import hashlib

    root = tmp_path / "repo"
    secret_file = outside / ".ssh" / "id_rsa"
    digest = hashlib.sha256(secret_file.read_bytes()).hexdigest()
    write_files(root, {"prompts/judge.j2": "Grade <answer>{{ output }}</answer>\n",
                       "pyproject.toml": "[tool.evallint]\nselect = ['EL610']\n"})
    (root / "prompts" / "linked.j2").symlink_to(secret_file)
    pins = [str(secret_file), "../home/.ssh/id_rsa", "prompts/linked.j2", "/proc/self/pagemap"]
    lock = "version: 1\nfiles:\n" + "".join(
        f'  "{p}":\n    sha256: {"0" * 64}\n    kind: rubric\n' for p in pins)
    (root / "evallint.lock").write_text(lock)
    code, out, err = check(root, "--no-cache")
    assert code == 1
    assert out.count("lies outside the project") == 4, out
    for prefix in (digest[:6], digest[:12]):
        assert prefix not in out + err
    assert "MemoryError" not in out + err and SECRET not in out + err


def test_a_lock_file_that_is_a_symlink_out_is_not_read(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": "Grade <answer>{{ output }}</answer>\n",
                       "pyproject.toml": "[tool.evallint]\nselect = ['EL610']\n"})
    (outside / "evallint.lock").write_text(f"version: 1\nfiles:\n  {SECRET}: [\n")
    (root / "evallint.lock").symlink_to(outside / "evallint.lock")
    code, out, err = check(root, "--no-cache")
    assert code == 1 and "lock file is a symlink out of the project" in out
    assert SECRET not in out + err


@pytest.mark.parametrize("value", ["/etc/evallint.lock", "../evallint.lock", ".."])
def test_the_lock_file_setting_stays_inside_the_project(tmp_path: Path, value: str) -> None:
    write_files(tmp_path, {"prompts/judge.j2": DIRTY_JUDGE,
                           "pyproject.toml": f"[tool.evallint]\nlock-file = '{value}'\n"})
    code, _, err = check(tmp_path)
    assert code == 2 and "lock-file" in err


# ----------------------------------------------------------- 4: folders that lead outside


@pytest.mark.parametrize("use_git", [True, False])
def test_a_symlinked_folder_that_leads_outside_is_never_read(
        tmp_path: Path, outside: Path, use_git: bool) -> None:
    """``prompts -> ~/notes``: neither a walk from ``.``, nor the folder named as the path,
    nor a file named through it, reads the judge template outside."""
    root = tmp_path / "repo"
    write_files(root, {"app.py": "import anthropic\nclient = anthropic.Anthropic()\n"})
    (root / "prompts").symlink_to(outside / "notes", target_is_directory=True)
    if use_git:
        git_commit(root)
    for args in ([["."], ["prompts"], ["prompts/"], ["prompts/judge.j2"], ["./prompts/."]][i]
                     for i in range(5)):
        for extra in ([], ["--show-files"]):
            code, out, err = check(root, "--no-cache", "-v", *extra, *args)
            assert SECRET not in out + err and "system_prompt" not in out, (args, out)
            assert "prompts/judge.j2" not in out, (args, out)
            if args != ["."]:
                assert code == 2 and "outside the project" in err, (args, err)


def test_a_config_above_an_unmarked_tree_does_not_widen_what_it_may_read(
        tmp_path: Path) -> None:
    """The tree has no project marker; the folder above it does (a home folder that is a git
    repository). A judge config in the tree names a template beside the tree: not read."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    write_files(home, {"notes/prompt.txt": "Judge {output_1} {output_2}. Reasoning: "
                                           "{chain_of_thought} " + SECRET + "\n"})
    tree = home / "ci" / "checkout"
    write_files(tree, {"annotator_configs/configs.yaml":
                       "pair_judge:\n  prompt_template: \"../../../notes/prompt.txt\"\n"
                       "  fn_completions: \"openai_completions\"\n"
                       "  fn_completion_parser: \"ranking_parser\"\n"})
    _code, out, err = check(tree, "--no-cache", "-v")
    assert SECRET not in out + err and "chain_of_thought" not in out


# --------------------------------------------------------------------------- 5: sinks


def test_output_files_replace_a_committed_symlink_never_write_through(
        tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    victim = outside / ".ssh" / "id_rsa"
    for name in ("evallint.sarif", "baseline.json"):
        (root / name).symlink_to(victim)
    before = snapshot(outside)
    code, _out, _err = check(root, "--output-format", "sarif", "-o", "evallint.sarif")
    assert code == 1
    assert not (root / "evallint.sarif").is_symlink()
    assert '"version": "2.1.0"' in (root / "evallint.sarif").read_text()
    assert check(root, "--write-baseline", "baseline.json")[0] == 0
    assert not (root / "baseline.json").is_symlink()
    assert snapshot(outside) == before


def test_an_output_folder_that_leads_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    (root / "reports").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    for args in (["-o", "reports/evallint.sarif"], ["--write-baseline", "reports/b.json"]):
        code, _out, err = check(root, *args)
        assert code == 2 and "reports/" in err and "symlink out of the project" in err
    assert snapshot(outside) == before


def test_a_baseline_that_is_a_device_a_fifo_or_a_symlink_out_is_an_error(
        tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    (root / "zero.json").symlink_to("/dev/zero")
    (root / "secret.json").symlink_to(outside / ".ssh" / "id_rsa")
    os.mkfifo(root / "fifo.json")
    (root / "big.json").write_bytes(b"[" + b" " * (65 * 1024 * 1024))
    for name in ("zero.json", "secret.json", "fifo.json", "big.json"):
        code, out, err = check(root, "--baseline", name)
        assert code == 2, (name, err)
        assert "MemoryError" not in err and SECRET not in out + err
        assert name in err
    (root / "dev.json").symlink_to("/dev/zero")  # named outside the project: still refused
    code, _out, err = check(root, "--baseline", str(Path("/dev/zero")))
    assert code == 2 and "MemoryError" not in err


# ------------------------------------------------------------------------ 7: the limits


def test_the_tree_s_config_cannot_lift_the_limits(tmp_path: Path) -> None:
    """pyproject.toml asks for an hour per file and 100 MB files: it gets the ceilings, and
    says so; only the command line lifts them."""
    from evallint.config import CEILINGS, load_config

    write_files(tmp_path, {"pyproject.toml": "[tool.evallint]\ntime-budget = 3600\n"
                                             "project-time-budget = 3600\n"
                                             "max-file-size = 100000000\n",
                           "app.py": "import anthropic\nx = '" + "a" * 9_000_000 + "'\n"})
    cfg = load_config(tmp_path)
    assert cfg.time_budget == CEILINGS["time-budget"]
    assert cfg.project_time_budget == CEILINGS["project-time-budget"]
    assert cfg.max_file_size == CEILINGS["max-file-size"]
    assert len(cfg.warnings) == 3 and all("only the command line" in w for w in cfg.warnings)
    code, out, err = check(tmp_path, "--no-cache")
    assert code == 1 and "EL901" in out and "8,000,000-byte limit" in out
    assert "time-budget = 3,600" in err or "time-budget = 3600" in err
    code, out, _ = check(tmp_path, "--no-cache", "--max-file-size", "10000000",
                         "--select", "EL901")
    assert "EL901" not in out


# -------------------------------------------------------------------- 10: what is printed


HOSTILE_NAMES = [
    "prompts/x\n::error file=ci.yml,line=1::pwned\n.j2",
    "prompts/\x1b]0;pwned\x07\x1b[2J.j2",
    "prompts/::warning::planted.j2",
    "prompts/javascript:alert(1).j2",
    "prompts/-rf.j2",
]


def _hostile_tree(root: Path) -> None:
    for name in HOSTILE_NAMES:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(DIRTY_JUDGE)


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_file_names_cannot_inject_commands_or_escapes(tmp_path: Path, fmt: str) -> None:
    import json

    root = tmp_path / "repo"
    _hostile_tree(root)
    code, out, err = check(root, "--no-cache", "-v", "--output-format", fmt)
    assert code == 1
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream
    for line in err.splitlines():
        assert not line.lstrip().startswith("::"), line
    for line in out.splitlines():
        if fmt == "github":
            assert line.startswith(("::error file=", "::warning file=", "::notice file=")), line
            assert "::pwned" not in line.split("::", 2)[1], line  # properties stay properties
        else:
            assert not line.lstrip().startswith("::"), line
    if fmt == "text":
        assert out.count("EL102") == len(HOSTILE_NAMES)
        assert len([ln for ln in out.splitlines() if not ln.startswith(" ")]) == \
            out.count(": EL")
    if fmt == "sarif":
        doc = json.loads(out)
        uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
                for r in doc["runs"][0]["results"] for loc in r["locations"]]
        assert len(uris) >= len(HOSTILE_NAMES)
        for uri in uris:
            assert ":" not in uri and "\n" not in uri and " " not in uri, uri
        assert "prompts/javascript%3Aalert%281%29.j2" in uris


def test_a_run_on_a_terminal_prints_what_a_pipe_gets(tmp_path: Path) -> None:
    """On a terminal the findings are coloured, and that is the only difference."""
    import pty
    import sys

    root = tmp_path / "repo"
    _hostile_tree(root)
    cmd = [sys.executable, "-m", "evallint", "check", "--no-cache"]
    piped = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=120)
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, cwd=root, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, err = proc.communicate(timeout=120)
    os.close(master)
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    assert proc.returncode == piped.returncode == 1, err
    assert "internal error" not in err.decode()
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", shown) == piped.stdout


# ---------------------------------------------------------------- 11: trust in the config


def test_isolated_and_an_outside_config_ignore_the_tree_s_own(tmp_path: Path) -> None:
    """The PR's pyproject.toml turns every rule off; --isolated, or the base branch's
    config given with --config from outside the checkout, checks the tree regardless."""
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE,
                       "pyproject.toml": "[tool.evallint]\nignore = ['ALL']\nexclude = ['*']\n"})
    base = tmp_path / "base" / "evallint.toml"
    write_files(base.parent, {"evallint.toml": "select = ['EL1']\n"})
    assert check(root, "--no-cache")[0] == 2  # nothing left to check: the PR hid it all
    code, out, _ = check(root, "--no-cache", "--isolated")
    assert code == 1 and "EL102" in out
    code, out, _ = check(root, "--no-cache", "--config", str(base))
    assert code == 1 and "EL102" in out and "prompts/judge.j2" in out
    code, _, err = check(root, "--isolated", "--config", str(base))
    assert code == 2 and "--isolated" in err
    # a base branch's pyproject.toml from before evallint: its defaults, not an error
    (tmp_path / "base" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    code, out, _ = check(root, "--no-cache", "--config", str(tmp_path / "base" / "pyproject.toml"))
    assert code == 1 and "EL102" in out


def test_a_tree_s_config_names_no_policy_pack_outside(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    (outside / "pack.yaml").write_text(f"rules: [{SECRET}\n")
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE,
                       "pyproject.toml": f"[tool.evallint]\npolicy = ['{outside}/pack.yaml', "
                                         "'../home/pack.yaml']\n"})
    code, out, err = check(root)
    assert code == 2 and "lies outside the project" in err and SECRET not in out + err
    # the same pack named by a config the runner chose is read
    base = outside / "base.toml"
    base.write_text("policy = ['pack.yaml']\n")
    code, _, err = check(root, "--config", str(base))
    assert code == 2 and "pack.yaml" in err and "outside the project" not in err


# ------------------------------------------------------------ 8: evasion by padding


ARENA = ("judge_model: gpt-4o-mini\nregex_pattern: \\[\\[([AB]+)\\]\\]\n"
         'system_prompt: "You are an impartial judge. End with [[A]] or [[B]]."\n'
         'prompt_template: ["Question: {question}\\nWriter reasoning: {reasoning}'
         '\\n<a>{answer_a}</a>\\n<b>{answer_b}</b>"]\n')
RECORD = ('{"name": "tone_judge", "model": "gpt-4o-mini", "system_prompt": "You are a strict '
          'grader. Reply with JSON {\\"score\\": 1}.", "prompt_template": "Question: {question}'
          '\\nNotes: {scratchpad}\\n<answer>\\n{answer}\\n</answer>"}')
PADDING_CASES = {
    "comments above a judge config": {
        "config/judge_config.yaml": "".join(f"# licence line {i:03d} " + "-" * 50 + "\n"
                                            for i in range(70)) + ARENA},
    "a long value before the judge keys": {
        "config/judge_config.yaml": "description: |\n" + "".join(
            f"  line {i} of a very long description of this judge\n" for i in range(200))
        + ARENA},
    "a collection just over a megabyte": {
        "prompt_sets/judges.jsonl": RECORD + "\n" + "".join(
            json.dumps({"name": f"filler_{i:05d}", "model": "gpt-4o-mini",
                        "prompt_template": "Say {x}"}) + "\n" for i in range(14_000))},
    "a first record of 17 KB (JSONL)": {
        "prompt_sets/judges.jsonl": RECORD[:-1] + ', "notes": "' + "n" * 17_000 + '"}\n'},
    "a first record of 17 KB (JSON, its template after the padding)": {
        "prompt_sets/judges.json": '[{"notes": "' + "n" * 17_000 + '", ' + RECORD[1:] + "]\n"},
    "a WildBench template's placeholder after 4 KiB": {
        "docs/judge.md": "Intro line.\n" * 400 + "Grade {$response} against {$checklist}.\n"
                         "Also shown: {$system_prompt}\n"},
}


@pytest.mark.parametrize("case", sorted(PADDING_CASES))
def test_padding_does_not_hide_a_judge(tmp_path: Path, case: str) -> None:
    """Each file holds a real finding; padding in front of what decides its kind must not
    make it vanish from the check."""
    write_files(tmp_path, PADDING_CASES[case])
    code, out, err = check(tmp_path, "--no-cache")
    assert code == 1, (out, err)
    assert "EL1" in out or "EL2" in out, out


def test_a_judge_config_past_the_size_limit_is_reported_not_dropped(tmp_path: Path) -> None:
    """Padded beyond max-file-size, the keys after the limit still tell what the file is,
    and the file is EL901 (not analysed, an error) rather than gone."""
    padding = "".join(f"# {i:07d} {'x' * 60}\n" for i in range(40_000))  # 2.8 MB
    write_files(tmp_path, {"config/judge_config.yaml": padding + ARENA,
                           "data/plain.yaml": padding + "rows: []\n"})
    code, out, _ = check(tmp_path, "--no-cache")
    assert code == 1 and "config/judge_config.yaml:1:1: EL901" in out
    assert "max-file-size" in out and "data/plain.yaml" not in out


def test_a_sniff_over_the_time_budget_is_el901_not_a_stall(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery reads YAML, markdown and JSON to tell their kind: that runs under the same
    per-file budget as parsing, and a file over it is EL901."""
    import time

    from evallint import discovery
    from tests.conftest import lint_tree

    real = discovery.classify

    def slow(rel: str, head: str | None = None, **kw: object) -> object:
        if rel.endswith("slow.yaml"):
            time.sleep(5)
        return real(rel, head, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery, "classify", slow)
    write_files(tmp_path, {"config/slow.yaml": ARENA, "prompts/judge.j2": DIRTY_JUDGE})
    started = time.monotonic()
    result = lint_tree(tmp_path, {"EL901", "EL102"}, config={"time-budget": 0.3})
    assert time.monotonic() - started < 4
    by = {(f.path, f.code): f.message for f in result.findings}
    assert "took longer than the time budget" in by[("config/slow.yaml", "EL901")]
    assert ("prompts/judge.j2", "EL102") in by


# ------------------------------------------------------ the executor's files, named by a spec


@pytest.mark.parametrize("key", ["results", "cases", "generator"])
def test_a_loop_spec_cannot_aim_run_outside_its_project(
        tmp_path: Path, outside: Path, key: str) -> None:
    from evallint.executor.errors import SpecError
    from evallint.executor.spec import load_spec
    from tests.executor.conftest import write_loop

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    import yaml

    spec = write_loop(root)
    data = yaml.safe_load(spec.read_text())
    target = "../home/.ssh/id_rsa"
    if key == "generator":
        data[key]["prompt"] = target
    else:
        data[key] = target
    spec.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError, match="outside the project"):
        load_spec(spec)


def test_run_never_appends_through_a_symlinked_results_file(
        tmp_path: Path, outside: Path) -> None:
    from evallint.executor.results import DurableLines

    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    (root / "out" / "results.jsonl").symlink_to(outside / ".ssh" / "id_rsa")
    before = snapshot(outside)
    with pytest.raises(OSError, match="symlink"):
        DurableLines(root / "out" / "results.jsonl").write("{}\n")
    assert snapshot(outside) == before


def test_a_cache_dir_named_on_the_command_line_through_a_symlink_out_is_refused(
        tmp_path: Path, outside: Path) -> None:
    """``--cache-dir .cache`` typed by the runner, where the PR committed ``.cache -> ~``."""
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    (root / ".cache").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    code, out, err = check(root, "--cache-dir", ".cache")
    assert code == 1 and "EL102" in out and "result cache off" in err
    assert snapshot(outside) == before
