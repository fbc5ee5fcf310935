"""The threat model's "nevers", each tried as an attacker with a pull request would.

See docs/security.md. The checked tree is untrusted: nothing in it may run code, hide a
finding through the cache, aim evallint's writes outside the project, or be read through a
symlink that leaves the project.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evallint import datacodec
from evallint.cache import MAGIC, PACK_MAGIC, Store, pack_bytes, read_pack
from evallint.cli import main
from tests.conftest import write_files

DIRTY_JUDGE = "You are a strict judge.\n<answer>{{ output }}</answer>\n{{ system_prompt }}\n"


class _OpensAFile:
    """Unpickling this creates ``marker``: proof that a pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def check(root: Path, *args: str, key: Path | None = None) -> tuple[int, str, str]:
    env = {"EVALLINT_CACHE_KEY": str(key)} if key is not None else {}
    old = Path.cwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["check", *args], env=env)
    finally:
        os.chdir(old)
    assert "Traceback" not in res.output
    return res.exit_code, res.stdout, res.stderr


def entries(root: Path) -> list[Path]:
    """The cache's entry files: one-entry files and the packs of per-file results."""
    return [p for p in (root / ".evallint_cache").rglob("*") if p.is_file()
            and (len(p.name) == 64 or (p.name.startswith("pack-") and p.suffix == ".bin"))]


def drop_whole_runs(root: Path) -> None:
    """Remove the cached whole run, so that the next run reads the per-file entries."""
    import shutil

    for folder in (root / ".evallint_cache").rglob("runs"):
        shutil.rmtree(folder)


@pytest.fixture
def dirty(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    return root


def test_a_code_running_pickle_in_the_cache_is_never_loaded(dirty: Path, tmp_path: Path) -> None:
    code, out, _ = check(dirty)
    assert code == 1 and "EL102" in out
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_OpensAFile(marker))
    planted = entries(dirty)
    assert planted, "the first run wrote cache entries"
    for entry in planted:
        entry.write_bytes(payload)
    # the same payload in the old (pickle) layout
    old = dirty / ".evallint_cache" / "v1" / "ab" / ("ab" + "0" * 62)
    old.parent.mkdir(parents=True)
    old.write_bytes(payload)
    code, out, err = check(dirty)
    assert not marker.exists()
    assert code == 1 and "EL102" in out and "from cache" not in err


def test_a_findings_free_entry_signed_with_another_key_is_a_miss(dirty: Path,
                                                                 tmp_path: Path) -> None:
    attacker_key = tmp_path / "attacker" / "cache.key"
    assert check(dirty, key=attacker_key)[0] == 1
    forged = 0
    key = attacker_key.read_bytes()
    for entry in entries(dirty):
        if entry.name.startswith("pack-"):
            store = Store(entry.parents[1], key, "")
            for k, (_mac, payload) in read_pack(entry.parent, entry.name, key).items():
                facts, _findings, sups, deps = datacodec.decode(payload)
                # the attacker drops the finding and signs the entry with their own key
                store.put_encoded("files", k, datacodec.encode((facts, [], sups, deps)))
                forged += 1
            entry.unlink()
            store.flush()
            continue
        namespace = entry.parent.parent.name
        value = datacodec.decode(entry.read_bytes()[len(MAGIC) + 65:])
        if namespace == "runs":  # the whole run's findings, with the same dependencies
            value = ([], value[1])
        Store(entry.parents[2], key, "").put(namespace, entry.name, value)
    assert forged == 1
    # With the attacker's own key the forgery would pass: that is what a key outside the
    # project protects against.
    _, out, err = check(dirty, key=attacker_key)
    assert "EL102" not in out and "(1 from cache)" in err
    code, out, err = check(dirty, key=tmp_path / "victim" / "cache.key")
    assert code == 1 and "EL102" in out and "from cache" not in err


def test_an_entry_edited_without_the_key_is_a_miss(dirty: Path) -> None:
    check(dirty)
    drop_whole_runs(dirty)
    (pack,) = [e for e in entries(dirty) if e.name.startswith("pack-")]
    user_key = Path(os.environ["EVALLINT_CACHE_KEY"]).read_bytes()
    ((k, (mac, payload)),) = read_pack(pack.parent, pack.name, user_key).items()
    facts, _findings, sups, deps = datacodec.decode(payload)
    # the attacker keeps the entry's HMAC and signs the index with a key of their own
    pack.write_bytes(pack_bytes({k: (mac, datacodec.encode((facts, [], sups, deps)))},
                                b"attacker" * 4))
    code, out, err = check(dirty)
    assert code == 1 and "EL102" in out and "from cache" not in err


def test_a_whole_run_edited_without_the_key_is_a_miss(dirty: Path) -> None:
    """The cached whole run answers a warm run; emptied of its finding and not re-signed, it
    is a miss, and the per-file entries give the finding back."""
    check(dirty)
    (run,) = [e for e in entries(dirty) if e.parent.parent.name == "runs"]
    head = len(MAGIC) + 65
    blob = run.read_bytes()
    _findings, deps = datacodec.decode(blob[head:])
    run.write_bytes(blob[:head] + datacodec.encode(([], deps)))
    code, out, err = check(dirty)
    assert code == 1 and "EL102" in out and "(1 from cache)" in err


@pytest.mark.parametrize("damage", ["truncated", "bad key", "huge length", "not a pack",
                                    "index past the end", "offset past the end", "bad offset"])
def test_a_damaged_pack_is_a_miss_and_never_a_crash(dirty: Path, damage: str) -> None:
    check(dirty)
    drop_whole_runs(dirty)
    (pack,) = [e for e in entries(dirty) if e.name.startswith("pack-")]
    blob = pack.read_bytes()
    head = len(PACK_MAGIC) + 16 + 64  # the magic, the index's length and HMAC; then the
    # first record: key (64), HMAC (64), offset (16), length (16), each hex
    if damage == "truncated":
        blob = blob[:-10]
    elif damage == "bad key":
        blob = blob[:head] + b"Z" + blob[head + 1:]
    elif damage == "huge length":
        blob = blob[:head + 144] + b"f" * 16 + blob[head + 160:]
    elif damage == "index past the end":
        blob = blob[:len(PACK_MAGIC)] + b"f" * 16 + blob[len(PACK_MAGIC) + 16:]
    elif damage == "offset past the end":
        blob = blob[:head + 128] + b"%016x" % len(blob) + blob[head + 144:]
    elif damage == "bad offset":
        blob = blob[:head + 128] + b"-" * 16 + blob[head + 144:]
    else:
        blob = b"PK\x03\x04" + blob
    pack.write_bytes(blob)
    code, out, err = check(dirty)
    assert code == 1 and "EL102" in out and "from cache" not in err


def test_packs_stay_few_and_merge_without_losing_other_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run with new results adds one pack; at MAX_PACKS the next run merges them into
    one. A run over one file (a pre-commit hook) keeps the other files' entries, unless the
    merged pack would pass MAX_MERGED bytes: then what the run used comes first."""
    from evallint import cache

    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE, "prompts/other.j2": "Hello {{ x }}\n"})
    assert check(root)[0] == 1
    for i in range(cache.MAX_PACKS + 1):
        (root / "prompts" / "other.j2").write_text(f"Hello {{{{ x }}}} {i}\n")
        code, out, err = check(root, "--no-project", "prompts/other.j2")  # judge not in these
        packs = [e for e in entries(root) if e.name.startswith("pack-")]
        assert 1 <= len(packs) <= cache.MAX_PACKS
    code, out, err = check(root)
    assert code == 1 and "EL102" in out and "(2 from cache)" in err  # the judge's entry kept
    monkeypatch.setattr(cache, "MAX_MERGED", 0)
    for i in range(cache.MAX_PACKS + 1):
        (root / "prompts" / "other.j2").write_text(f"Hi {{{{ x }}}} {i}\n")
        check(root, "--no-project", "prompts/other.j2")
    code, out, err = check(root)
    assert "(1 from cache)" in err  # over the size cap: only what the last runs used


def test_a_warm_run_reads_its_own_entries(dirty: Path) -> None:
    cold = check(dirty)
    warm = check(dirty)
    assert warm[1] == cold[1] and "(1 from cache)" in warm[2]


@pytest.mark.parametrize("value", ["/", "/tmp/elsewhere", "../outside", "a/../../b", "."])
def test_config_cannot_point_the_cache_outside_the_project(tmp_path: Path, value: str) -> None:
    write_files(tmp_path, {"prompts/judge.j2": DIRTY_JUDGE,
                           "pyproject.toml": f"[tool.evallint]\ncache-dir = {json.dumps(value)}\n"})
    code, _, err = check(tmp_path)
    assert code == 2 and "cache-dir" in err and "EVALLINT_CACHE_DIR" in err


def test_a_cache_folder_elsewhere_comes_from_the_command_line_or_environment(
        dirty: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "ci-cache"
    assert check(dirty, "--cache-dir", str(elsewhere))[0] == 1
    assert (elsewhere / ".gitignore").read_text().splitlines()[-1] == "*"
    assert any(p.name for p in (elsewhere / "v2" / "files").rglob("*") if p.is_file())
    assert not (dirty / ".evallint_cache").exists()
    env_dir = tmp_path / "env-cache"
    old = Path.cwd()
    os.chdir(dirty)
    try:
        res = CliRunner().invoke(main, ["check"], env={"EVALLINT_CACHE_DIR": str(env_dir)})
    finally:
        os.chdir(old)
    assert res.exit_code == 1 and (env_dir / "CACHEDIR.TAG").exists()


def test_a_committed_symlink_cannot_aim_cache_writes_outside(dirty: Path, tmp_path: Path) -> None:
    outside = tmp_path / "victim-home"
    outside.mkdir()
    (dirty / ".evallint_cache").symlink_to(outside, target_is_directory=True)
    code, out, err = check(dirty)
    assert code == 1 and "EL102" in out
    assert "result cache off" in err and "outside the project" in err
    assert list(outside.iterdir()) == []


def test_the_cache_folder_ignores_itself_and_is_tagged(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "."], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "init"], check=True)
    assert check(root)[0] == 1
    assert (root / ".evallint_cache" / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55")
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == ""


def test_the_key_lives_outside_the_project(dirty: Path) -> None:
    code, out, err = check(dirty, key=dirty / ".keys" / "cache.key")
    assert code == 1 and "EL102" in out
    assert "result cache off" in err and not (dirty / ".keys" / "cache.key").exists()
    assert not entries(dirty)


def test_symlinks_out_of_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_files(outside, {"secret.j2": "{{ system_prompt }} TOP-SECRET-7781\n"})
    root = tmp_path / "repo"
    write_files(root, {"prompts/ok.j2": "Grade <answer>{{ output }}</answer> for {{ input }}\n"})
    (root / "prompts" / "judge.j2").symlink_to(outside / "secret.j2")
    (root / "prompts" / "inner_judge.j2").symlink_to(root / "prompts" / "ok.j2")
    code, out, err = check(root, "--no-cache")
    assert "TOP-SECRET" not in out + err and "EL102" not in out
    assert "prompts/judge.j2: not read: a symlink to a file outside the project" in err
    # Named on the command line (pre-commit passes changed files by name): still not read.
    code, out, err = check(root, "--no-cache", "prompts/judge.j2")
    assert code == 2 and "TOP-SECRET" not in out + err
    # A link that stays inside the project is read as usual.
    _, out, _ = check(root, "--no-cache", "--show-files")
    assert "prompts/inner_judge.j2" in out and "prompts/judge.j2" not in out


def test_python_with_import_time_side_effects_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    effect = f"open({str(marker)!r}, 'w').write('x')\n"
    body = ("import anthropic\n" + effect + "client = anthropic.Anthropic()\n"
            "def judge(answer):\n"
            "    return client.messages.create(model='m', max_tokens=5,\n"
            "        messages=[{'role': 'user', 'content': answer}])\n")
    write_files(tmp_path, {"loop/judge.py": body, "loop/__init__.py": effect,
                           "conftest.py": effect, "setup.py": effect,
                           "notebook.ipynb": json.dumps({
                               "cells": [{"cell_type": "code", "source": [effect],
                                          "metadata": {}, "outputs": []}],
                               "metadata": {}, "nbformat": 4, "nbformat_minor": 5})})
    code, _, _ = check(tmp_path)
    assert code in (0, 1)
    assert not marker.exists()


PAYLOADS = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.system('touch %s') }}",
    "{% set x = lipsum.__globals__['os'].popen('touch %s').read() %}{{ x }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('touch %s') }}",
]


def test_templates_are_parsed_never_rendered_by_check(tmp_path: Path) -> None:
    marker = tmp_path / "rendered"
    body = "\n".join(p.replace("%s", str(marker)) for p in PAYLOADS)
    write_files(tmp_path / "repo", {"prompts/judge.j2": "Grade {{ output }}\n" + body + "\n"})
    code, _, _ = check(tmp_path / "repo")
    assert code in (0, 1) and not marker.exists()


def test_run_renders_only_in_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.executor.cli import run

    marker = tmp_path / "rendered"
    payload = PAYLOADS[1].replace("%s", str(marker))
    root = tmp_path / "loop"
    write_files(root, {
        "prompts/generator.prompt.j2": "---\nstep: generator\n---\n## User\n{{ input }} "
                                       + payload + "\n",
        "prompts/evaluator.prompt.md": "---\nstep: evaluator\n---\n## System\nYou grade. "
            'Reply with JSON {"score": 0.0, "feedback": "..."}\n## User\n'
            "<input>{{input}}</input>\n<output>{{output}}</output>\n",
        "cases.jsonl": json.dumps({"id": "c1", "input": "q"}) + "\n",
        "evallint.loop.yaml": "generator: {prompt: prompts/generator.prompt.j2, model: "
            "claude-sonnet-4-6}\nevaluator: {prompt: prompts/evaluator.prompt.md, model: "
            "claude-haiku-4-5}\npass_threshold: 0.8\nmax_attempts: 2\ncases: cases.jsonl\n"
            "results: out/results.jsonl\nmax_cost_usd: 1\n",
    })
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    res = CliRunner().invoke(run, [str(root / "evallint.loop.yaml"), "--dry-run"])
    assert "Traceback" not in res.output
    assert not marker.exists()
    assert res.exit_code == 2 and "unsafe" in res.output


def test_a_subprocess_check_of_a_hostile_tree_runs_nothing(tmp_path: Path) -> None:
    """End to end as CI runs it: a fresh process, cache on, a poisoned pickle committed."""
    marker = tmp_path / "pwned"
    root = tmp_path / "repo"
    write_files(root, {"prompts/judge.j2": DIRTY_JUDGE})
    env = {**os.environ, "EVALLINT_CACHE_KEY": str(tmp_path / "key")}
    cmd = [sys.executable, "-m", "evallint", "check"]
    subprocess.run(cmd, cwd=root, env=env, capture_output=True, check=False)
    for entry in entries(root):
        entry.write_bytes(pickle.dumps(_OpensAFile(marker)))
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "EL102" in proc.stdout and not marker.exists()


@pytest.mark.parametrize("table", ['"evallint.facts:Pos"', '[["evallint.facts:Pos"]]',
                                   '["os:system"]', '["evallint.facts:Nope"]', '[1]'])
def test_a_bad_class_table_is_refused_every_time(table: str) -> None:
    """Decoders are reused by class table; a table that is refused once is refused again."""
    from evallint.facts import Pos

    blob = f'[{table}, ["C", 0, 1, 2]]'.encode()
    for _ in range(2):
        with pytest.raises(datacodec.CodecError):
            datacodec.decode(blob)
    good = datacodec.encode([Pos(1, 2), Pos(3, 4)])
    assert datacodec.decode(good) == datacodec.decode(good) == [Pos(1, 2), Pos(3, 4)]


def test_empty_tuples_travel_as_empty_arrays_and_come_back_as_tuples() -> None:
    from evallint.pyflow.ir import Val

    value = [(), ((), ("a",)), Val(names=(), calls=(1,), text="t"), frozenset({()}), {(): ()}]
    blob = datacodec.encode(value)
    assert b'["T"]' not in blob  # no tagged empty tuple: [] stands for it
    assert datacodec.decode(blob) == value
    assert datacodec.decode(b'[[], []]') == ()



def test_fields_left_at_their_defaults_are_left_out_and_come_back_fresh() -> None:
    """A summary that sets only its position is encoded as that one field; the fields made
    by a factory (a dict, ``ModelInfo()``) come back as new objects, one per decoding."""
    from evallint.facts import Pos
    from evallint.pyflow.summaries import ModelInfo, Summary

    blob = datacodec.encode(Summary(pos=Pos(3, 4)))
    classes, body = json.loads(blob)
    assert body == ["C", classes.index("evallint.pyflow.summaries:Summary"),
                    ["C", classes.index("evallint.facts:Pos"), 3, 4]]
    first, second = datacodec.decode(blob), datacodec.decode(blob)
    assert first == second == Summary(pos=Pos(3, 4))
    first.slots[1] = frozenset({"judge"})
    first.model.fixed = "m"
    assert second.slots == {} and second.model == ModelInfo()
    busy = Summary(pos=Pos(1, 1), sinks={0: frozenset({"judge"})}, meta=True)
    assert datacodec.decode(datacodec.encode(busy)) == busy
    assert datacodec.decode(datacodec.encode(Summary())) == Summary()


def test_only_factories_that_always_make_the_same_value_give_a_default() -> None:
    from evallint.pyflow.summaries import ModelInfo

    assert datacodec._made_default(dict) == {}
    assert datacodec._made_default(ModelInfo) == ModelInfo()
    assert datacodec._made_default(lambda: {}) is datacodec._NO_DEFAULT
    assert datacodec._made_default(dataclasses.MISSING) is datacodec._NO_DEFAULT


@pytest.mark.parametrize("value", ['"evaluator"', '"nope"', "3", "null"])
def test_an_enum_member_is_read_by_its_value_and_nothing_else(value: str) -> None:
    from evallint.roles import Role

    blob = f'[["evallint.roles:Role"], ["E", 0, {value}]]'.encode()
    if value == '"evaluator"':
        assert datacodec.decode(blob) is Role.EVALUATOR
    else:
        with pytest.raises(datacodec.CodecError):
            datacodec.decode(blob)

def _module_facts(tmp_path: Path) -> Any:
    from evallint.frontends.python_front import build_facts
    from evallint.source import read_source

    code = ("import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef ask(q):\n"
            "    return client.messages.create(model='m', messages=[q])\n\n\n"
            "def tidy(text):\n    return text.strip()\n")
    (tmp_path / "mod.py").write_text(code)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        return build_facts(read_source(Path("mod.py"), "mod.py"), force=True)
    finally:
        os.chdir(old)


def test_a_module_s_functions_come_back_one_by_one_as_they_are_read(tmp_path: Path) -> None:
    facts = _module_facts(tmp_path)
    want = dict(facts.functions)
    back = datacodec.decode(datacodec.encode(facts))
    assert list(back.functions) == list(want) == list(facts.function_order)
    assert "tidy" in back.functions and "nope" not in back.functions
    assert len(back.functions) == len(want)
    assert back.functions["tidy"] == want["tidy"] and dict(back.functions) == want
    assert pickle.loads(pickle.dumps(back.functions)) == want  # pickles as a plain dict
    again = datacodec.decode(datacodec.encode(back))  # re-encoded from its lazy form
    assert dict(again.functions) == want


def _segmented(body: str, *segments: bytes, lengths: str | None = None) -> bytes:
    """An entry in the segmented form: a line of JSON, a newline, the segments."""
    sizes = lengths if lengths is not None else json.dumps([len(x) for x in segments])
    return f"[[], {body}, {sizes}]".encode() + b"\n" + b"".join(segments)


def test_a_broken_entry_of_a_lazy_map_fails_only_when_it_is_read() -> None:
    lazy = datacodec.decode(_segmented('["M", "a", 0, "b", 1]', b'["C", 999]', b'["T", 1, 2]'))
    assert list(lazy) == ["a", "b"] and "a" in lazy
    assert lazy["b"] == (1, 2)  # the other entry still reads
    with pytest.raises(datacodec.CodecError):
        lazy["a"]  # a class index the table does not have


@pytest.mark.parametrize("body", ['["M", "a"]', '["M", "a", 1]', '["M", 1, "[]"]'])
def test_a_malformed_lazy_map_is_refused(body: str) -> None:
    with pytest.raises(datacodec.CodecError):
        datacodec.decode(f"[[], {body}]".encode())


@pytest.mark.parametrize(("body", "lengths"), [
    ('["M", "a", 1]', None),  # past the last segment
    ('["M", "a", -1]', None),
    ('["M", "a", "0"]', None),  # an index, not text
    ('["M", "a", 0]', "[3]"),  # segments longer than the entry
    ('["M", "a", 0]', "[1]"),  # shorter: bytes left over
    ('["M", "a", 0]', "[-2, 4]"),
    ('["M", "a", 0]', '"2"'),
])
def test_a_segment_out_of_bounds_is_refused(body: str, lengths: str | None) -> None:
    with pytest.raises(datacodec.CodecError):
        datacodec.decode(_segmented(body, b"[]", lengths=lengths))


def test_lazy_parts_travel_as_segments_after_one_line_of_json(tmp_path: Path) -> None:
    facts = _module_facts(tmp_path)
    blob = datacodec.encode(facts)
    line, _, rest = blob.partition(b"\n")
    assert b"messages.create" not in line  # the code tree is not in the line
    assert b'\\"' not in blob  # nor JSON text quoted inside JSON
    head = json.loads(line)
    assert sum(head[2]) == len(rest)
    back = datacodec.decode(blob)
    assert back.functions["ask"] == facts.functions["ask"]
    with pytest.raises(datacodec.CodecError):
        datacodec.decode(blob[:-1])  # a segment cut short


def test_a_large_lazy_part_can_be_stored_apart_and_read_through_a_loader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """encode_parts leaves a lazy part of at least DETACH_MIN bytes out of the entry; the
    decoded object reads it only through the loader attached to it, and without one says so
    (a CodecError, not a missing attribute)."""
    facts = _module_facts(tmp_path)
    monkeypatch.setattr(datacodec, "DETACH_MIN", 10**9)
    whole, parts = datacodec.encode_parts(facts)
    assert parts == [] and whole == datacodec.encode(facts)  # small parts stay in the entry
    monkeypatch.setattr(datacodec, "DETACH_MIN", 0)
    entry, [part] = datacodec.encode_parts(facts)
    assert b"messages.create" not in entry and b"messages.create" in part
    back = datacodec.decode(entry)
    assert datacodec.detached(back) and back.module == facts.module
    with pytest.raises(datacodec.CodecError):
        getattr(back, "functions")  # noqa: B009 (the attribute read is the test)
    loads: list[int] = []

    def load() -> object:
        loads.append(1)
        return datacodec.decode(part)

    datacodec.attach(back, load)
    assert not datacodec.detached(back)
    assert back.functions["ask"] == facts.functions["ask"] and loads == [1]
    back.release_tree()  # dropped, and read again through the loader when asked for
    assert back.constants == facts.constants and loads == [1, 1]
    assert datacodec.lazy_values(back) == datacodec.lazy_values(facts)


def test_a_run_reads_a_packs_index_and_the_entries_it_uses_not_the_whole_pack(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merged pack may hold many older entries; reading one entry must not read them."""
    from evallint import cache

    folder = tmp_path / "cache"
    writer = Store(folder, b"k" * 32, "salt")
    writer.put("files", "a" * 64, ["small"])
    writer.put("files", "b" * 64, ["x" * 2_000_000])  # an old entry no one asks for
    writer.flush()
    read: list[int] = []
    real = cache._read_at

    def counting(fd: int, n: int, at: int) -> bytes:
        data = real(fd, n, at)
        read.append(len(data))
        return data

    monkeypatch.setattr(cache, "_read_at", counting)
    reader = Store(folder, b"k" * 32, "salt")
    assert reader.has("files", "b" * 64)
    assert reader.get("files", "a" * 64) == ["small"]
    assert 0 < sum(read) < 10_000
    assert reader.get("files", "b" * 64) == ["x" * 2_000_000]  # still there when asked for
    reader.close()
    assert reader.get("files", "a" * 64) == ["small"]  # a closed store opens its packs again
    reader.close()


def test_a_merge_leaves_the_largest_pack_until_the_others_reach_half_its_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit run adds a small pack; merging must not rewrite the large one each time (it
    holds the whole tree's entries). The small packs are merged beside it until they add up
    to half its size; then everything is merged into one pack. No entry is lost."""
    from evallint import cache

    monkeypatch.setattr(cache, "MAX_PACKS", 3)
    folder = tmp_path / "cache"
    sizes: dict[int, int] = {}

    def run(i: int, size: int) -> list[Path]:
        store = Store(folder, b"k" * 32, "salt")
        store.has("files", "")  # as a run does: it reads the packs' indexes first
        store.put("files", f"{i:064x}", ["x" * size])
        store.flush()
        store.close()
        sizes[i] = size
        return sorted((folder / "files").iterdir())

    [large] = run(0, 100_000)
    blob = large.read_bytes()
    for i in range(1, 10):
        packs = run(i, 1_000 if i < 5 else 20_000)
        assert len(packs) <= 3
        assert (large in packs) == (i < 9), i  # by run 9 the others reach half its size
        if i < 9:
            assert large.read_bytes() == blob  # never rewritten
    assert len(packs) == 1  # run 9: all merged
    store = Store(folder, b"k" * 32, "salt")
    assert all(store.get("files", f"{i:064x}") == ["x" * n] for i, n in sizes.items())
    store.close()


def test_after_merging_its_packs_a_store_still_reads_every_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that merges the packs (and removes the old ones, closed first: Windows keeps an
    open file) still reads entries afterwards, from the merged pack."""
    from evallint import cache

    monkeypatch.setattr(cache, "MAX_PACKS", 2)
    folder = tmp_path / "cache"
    for i in range(4):  # one run each: read what is there, write one entry
        store = Store(folder, b"k" * 32, "salt")
        assert all(store.get("files", f"{j:064x}") == [j] for j in range(i))
        store.put("files", f"{i:064x}", [i])
        store.flush()
        assert all(store.get("files", f"{j:064x}") == [j] for j in range(i))
        store.close()
        assert len(list((folder / "files").iterdir())) <= 2
    store = Store(folder, b"k" * 32, "salt")
    assert all(store.get("files", f"{j:064x}") == [j] for j in range(4))
    store.close()
