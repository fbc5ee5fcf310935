"""`evallint server` driven as an editor drives it: a subprocess, JSON-RPC over real pipes.

Every read has a timeout, so a server that hangs fails the test instead of stalling CI.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evallint.registry import load_rules
from evallint.server.positions import UTF8, UTF16, UTF32, Lines, from_client, to_client

TIMEOUT = 30.0

# A judge template that shows the generator's system prompt to the judge (EL102) on a line
# with an emoji before the variable: the emoji is one character but two UTF-16 code units.
JUDGE = textwrap.dedent("""\
    ---
    step: evaluator
    model: claude-haiku-4-5
    ---
    Grade the reply strictly.

    🧪 Solver brief — {{ system_prompt }}

    Task: <task>{{ input }}</task>
    Reply: <reply>{{ output }}</reply>

    Answer as JSON: {"score": 0, "feedback": ""}
    """)
BAD_LINE = 6  # 0-based line of the emoji line
FIXED_LINE = "The solver's brief is not shown to the grader."

# A fixer for the test only, registered in the server process before it starts: it replaces
# the offending line, so the edit's end column is the line's length in UTF-16 units.
BOOT = textwrap.dedent("""\
    from evallint import fixing
    from evallint.cli import main

    @fixing.fixer("EL102")
    def _replace_line(finding, text):
        starts = fixing.line_offsets(text)
        start = starts[finding.line - 1]
        end = text.index("\\n", start)
        return fixing.Fix("EL102", "Drop the generator context", True,
                          (fixing.TextEdit(start, end, %r),))

    main(["server"], prog_name="evallint")
    """) % FIXED_LINE


class Client:
    """A minimal LSP client: Content-Length framing over the server's stdin and stdout."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.held: list[dict[str, Any]] = []
        self.next_id = 0
        self.errors: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        """Keep the server's stderr flowing (a full pipe would block it) for failure output."""
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.errors.append(line)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                header = out.readline()
                if not header:
                    self.inbox.put(None)
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None, "a message without Content-Length"
            self.inbox.put(json.loads(out.read(length).decode("utf-8")))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any] | None) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == ident and "method" not in m)
        assert "error" not in reply, reply
        return reply.get("result")

    def wait(self, match: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The first message (held or arriving) that ``match``es; others are kept."""
        for i, message in enumerate(self.held):
            if match(message):
                return self.held.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message in {timeout} s; got {self.held}")
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError(f"the server closed its output: {self.stderr()}")
            if match(message):
                return message
            self.held.append(message)

    def diagnostics(self, uri: str, version: int) -> list[dict[str, Any]]:
        """The diagnostics published for ``uri`` at ``version``."""
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri
                            and m["params"].get("version") == version)
        return list(message["params"]["diagnostics"])

    def stderr(self) -> str:
        return b"".join(self.errors).decode("utf-8", "replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)


def _session(argv: list[str], root: Path, capabilities: dict[str, Any] | None = None) -> Client:
    client = Client(argv, root)
    result = client.request("initialize", {
        "processId": None, "rootUri": root.as_uri(), "capabilities": capabilities or {},
        "initializationOptions": {"debounce": 0.05}})
    caps = result["capabilities"]
    assert caps["hoverProvider"] is True
    assert "quickfix" in caps["codeActionProvider"]["codeActionKinds"]
    client.notify("initialized", {})
    return client


def _open(client: Client, path: Path, text: str, language: str = "markdown") -> str:
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": language, "version": 1, "text": text}})
    return uri


def _shutdown(client: Client) -> None:
    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0, client.stderr()


def _project(tmp_path: Path) -> Path:
    judge = tmp_path / "prompts" / "judge.prompt.md"
    judge.parent.mkdir()
    judge.write_text(JUDGE, encoding="utf-8")
    return judge


def test_a_real_stdio_session_diagnoses_fixes_and_hovers(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    client = _session([sys.executable, "-c", BOOT], tmp_path)
    try:
        uri = _open(client, judge, JUDGE)
        diags = [d for d in client.diagnostics(uri, 1) if d["code"] == "EL102"]
        assert len(diags) == 1, diags
        diag = diags[0]
        bad = JUDGE.splitlines()[BAD_LINE]
        column = bad.index("system_prompt")
        assert diag["range"]["start"]["line"] == BAD_LINE
        # one emoji before the variable: UTF-16 counts one unit more than characters
        assert diag["range"]["start"]["character"] == column + 1
        assert diag["source"] == "evallint"
        assert diag["severity"] == 1
        assert "system_prompt" in diag["message"]

        hover = client.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": diag["range"]["start"]})
        assert "EL102" in hover["contents"]["value"]
        assert load_rules()["EL102"].summary in hover["contents"]["value"]
        # why evallint reads the file as a judge's: the evidence behind the role
        assert "front matter step: evaluator" in hover["contents"]["value"]

        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diag["range"],
            "context": {"diagnostics": [diag]}})
        assert len(actions) == 1, actions
        action = actions[0]
        assert action["kind"] == "quickfix" and action["isPreferred"] is True
        (edit,) = action["edit"]["changes"][uri]
        assert edit["newText"] == FIXED_LINE
        assert edit["range"] == {"start": {"line": BAD_LINE, "character": 0},
                                 "end": {"line": BAD_LINE,
                                         "character": len(bad.encode("utf-16-le")) // 2}}

        (fix_all,) = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diag["range"],
            "context": {"diagnostics": [], "only": ["source.fixAll"]}})
        assert fix_all["kind"] == "source.fixAll.evallint"
        assert fix_all["edit"]["changes"][uri] == [edit]

        # the editor applies the edit as an incremental change (UTF-16 range): clean
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]})
        assert [d for d in client.diagnostics(uri, 2) if d["code"] == "EL102"] == []
        _shutdown(client)
    finally:
        client.close()


def test_the_console_command_serves_and_exits_cleanly(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    client = _session([sys.executable, "-m", "evallint", "server"], tmp_path)
    try:
        uri = _open(client, judge, JUDGE)
        assert "EL102" in {d["code"] for d in client.diagnostics(uri, 1)}
        # the buffer, not the disk: the open text is clean, the file on disk is not
        clean = JUDGE.replace("🧪 Solver brief — {{ system_prompt }}", FIXED_LINE)
        # three quick changes (typing): one run, on the last text, after the pause
        for version, text in ((2, JUDGE + "\n"), (3, JUDGE + "\n\n"), (4, clean)):
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}]})
        assert "EL102" not in {d["code"] for d in client.diagnostics(uri, 4)}
        assert not [m for m in client.held if m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"].get("version") in (2, 3)]
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        closed = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri
                             and m["params"]["diagnostics"] == [])
        assert closed

        # a cross-file finding: the related location is the generator call
        loop, _ = _shared_project(tmp_path)
        loop_uri = _open(client, loop, loop.read_text(encoding="utf-8"), "python")
        (same,) = [d for d in client.diagnostics(loop_uri, 1) if d["code"] == "EL301"]
        assert same["range"]["start"] == {"line": 18, "character": 11}
        (related,) = same["relatedInformation"]
        assert related["location"]["uri"] == loop_uri
        assert related["location"]["range"]["start"] == {"line": 9, "character": 11}

        # hover on a code inside a suppression comment
        notes = tmp_path / "prompts" / "notes.j2"
        suppression = "{# evallint: ignore[EL105] -- the caller fences the reply #}"
        notes_uri = _open(client, notes, suppression + "\nSummarise {{ input }}.\n", "jinja")
        client.diagnostics(notes_uri, 1)
        hover = client.request("textDocument/hover", {
            "textDocument": {"uri": notes_uri},
            "position": {"line": 0, "character": suppression.index("EL105") + 2}})
        assert hover["contents"]["value"].startswith("**EL105**")
        assert load_rules()["EL105"].summary in hover["contents"]["value"]
        assert client.request("textDocument/hover", {
            "textDocument": {"uri": notes_uri},
            "position": {"line": 1, "character": 2}}) is None
        _shutdown(client)
    finally:
        client.close()


@pytest.mark.parametrize(("encoding", "expected"), [(UTF16, 3), (UTF8, 6), (UTF32, 2)])
def test_columns_in_each_position_encoding(encoding: str, expected: int) -> None:
    line = "é🧪x"
    assert to_client(line, 2, encoding) == expected
    assert from_client(line, expected, encoding) == 2


def test_a_column_past_the_known_text_is_kept() -> None:
    assert to_client("", 7) == 7
    assert to_client("🧪", 3) == 4


def test_a_client_column_inside_a_surrogate_pair_rounds_up() -> None:
    assert from_client("🧪x", 1, UTF16) == 1
    assert from_client("🧪x", 99, UTF16) == 2


def test_lines_convert_offsets_on_crlf_and_non_ascii_text() -> None:
    lines = Lines("ab\r\n🧪 c\n")
    assert lines.line(0) == "ab"
    offset = lines.text.index("c")
    assert lines.client_position(offset) == (1, 3)
    assert lines.offset(1, 3) == offset


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "broken" / "python"


def _shared_project(root: Path) -> tuple[Path, Path]:
    """The broken fixture pair: one helper module, one loop that calls it for both roles."""
    for name in ("shared_llm.py", "shared_loop.py"):
        (root / name).write_text((FIXTURES / name).read_text(encoding="utf-8"),
                                 encoding="utf-8")
    return root / "shared_loop.py", root / "shared_llm.py"


def test_cross_file_flows_use_the_buffer_and_the_disk_and_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.server.workspace import WorkspaceLinter

    monkeypatch.chdir(tmp_path)
    loop, helper = _shared_project(tmp_path)
    linter = WorkspaceLinter(tmp_path)
    text = loop.read_text(encoding="utf-8")
    first = linter.lint({str(loop): text})
    assert first.errors == []
    same_model = [f for f in first.findings[str(loop)] if f.code == "EL301"]
    assert [f.line for f in same_model] == [19]
    # the default model lives in the closed file, read from the disk by the project analysis
    assert "shared_llm.py:9" in same_model[0].message
    assert [(r.path, r.line) for r in same_model[0].related] == [("shared_loop.py", 10)]
    assert str(helper) not in first.findings  # closed files get no diagnostics

    # an unsaved edit in the open file: the judge call names its own, cheaper model
    edited = text.replace('Answer: {answer}")', 'Answer: {answer}", model="claude-haiku-4-5")')
    assert edited != text
    second = linter.lint({str(loop): edited})
    assert "EL301" not in {f.code for f in second.findings.get(str(loop), [])}
    assert second.cached == 1  # the helper module came from the result cache
    assert loop.read_text(encoding="utf-8") == text  # the disk is never written


def test_a_workspace_reached_through_a_symlink(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.server.workspace import WorkspaceLinter

    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.chdir(link)
    judge = _project(real)
    named = str(link / judge.relative_to(real))
    outcome = WorkspaceLinter(link).lint({named: JUDGE})
    assert "EL102" in {f.code for f in outcome.findings[named]}


def test_the_file_listing_is_kept_between_keystrokes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.server.workspace import WorkspaceLinter

    monkeypatch.chdir(tmp_path)
    judge = _project(tmp_path)
    linter = WorkspaceLinter(tmp_path)
    assert linter.lint({str(judge): JUDGE}).files == 1
    (tmp_path / "prompts" / "writer.prompt.md").write_text("Write about {{ input }}.\n",
                                                           encoding="utf-8")
    assert linter.lint({str(judge): JUDGE}).files == 1  # a keystroke: same listing
    linter.stale()  # a save or a watched-file event
    assert linter.lint({str(judge): JUDGE}).files == 2


def test_a_broken_config_is_an_error_not_a_crash(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.server.workspace import WorkspaceLinter

    monkeypatch.chdir(tmp_path)
    judge = _project(tmp_path)
    (tmp_path / "evallint.toml").write_text("select = [\n", encoding="utf-8")
    outcome = WorkspaceLinter(tmp_path).lint({str(judge): JUDGE})
    assert outcome.findings == {}
    assert len(outcome.errors) == 1 and "invalid TOML" in outcome.errors[0]


def test_without_pygls_the_command_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from evallint.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.setitem(sys.modules, "pygls.server", None)
    result = CliRunner().invoke(main, ["server"])
    assert result.exit_code == 2
    assert "evallint-policy[server]" in result.output


def test_a_notebook_finding_sits_on_the_first_line_and_names_its_cell(tmp_path: Path) -> None:
    from evallint.findings import Finding, Related, Severity
    from evallint.server.lsp import EvallintServer, _FileLines

    nb = tmp_path / "loop.ipynb"
    nb.write_text('{"cells": []}\n', encoding="utf-8")
    finding = Finding("EL501", "the refinement loop has no bound", str(nb), 3, 5,
                      severity=Severity.NOTE, cell=2,
                      related=[Related(str(nb), 1, 1, "the generator call", cell=1)])
    server = EvallintServer()
    diag = server.diagnostic(finding, 0, _FileLines({}), UTF16, dict(load_rules()))
    assert diag.message == "cell 2, line 3: the refinement loop has no bound"
    assert (diag.range.start.line, diag.range.start.character) == (0, 0)
    assert diag.severity == 3  # a note is information
    assert diag.code == "EL501" and diag.source == "evallint"
    (related,) = diag.related_information or []
    assert related.message == "cell 1, line 1: the generator call"
    assert related.location.uri == nb.resolve().as_uri()


def test_a_broken_config_is_shown_once_not_after_every_keystroke(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    (tmp_path / "evallint.toml").write_text("select = [\n", encoding="utf-8")
    client = _session([sys.executable, "-m", "evallint", "server"], tmp_path)
    try:
        uri = _open(client, judge, JUDGE)
        assert client.diagnostics(uri, 1) == []
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": JUDGE}]})
        assert client.diagnostics(uri, 2) == []
        shown = [m for m in client.held if m.get("method") == "window/showMessage"]
        assert len(shown) == 1, shown
        assert shown[0]["params"]["type"] == 1 and "invalid TOML" in shown[0]["params"]["message"]
        _shutdown(client)
    finally:
        client.close()


def test_a_config_changed_on_disk_relints_the_open_files(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    client = _session([sys.executable, "-m", "evallint", "server"], tmp_path, {
        "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}})
    try:
        register = client.wait(lambda m: m.get("method") == "client/registerCapability")
        (registration,) = register["params"]["registrations"]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        assert "toml" in registration["registerOptions"]["watchers"][0]["globPattern"]
        client.send({"id": register["id"], "result": None})
        uri = _open(client, judge, JUDGE)
        assert "EL102" in {d["code"] for d in client.diagnostics(uri, 1)}
        config = tmp_path / "evallint.toml"
        config.write_text('ignore = ["EL102"]\n', encoding="utf-8")
        client.notify("workspace/didChangeWatchedFiles",
                      {"changes": [{"uri": config.as_uri(), "type": 1}]})
        assert "EL102" not in {d["code"] for d in client.diagnostics(uri, 1)}
        _shutdown(client)
    finally:
        client.close()


def test_a_client_that_counts_in_utf8_gets_utf8_columns(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    client = Client([sys.executable, "-m", "evallint", "server"], tmp_path)
    try:
        result = client.request("initialize", {
            "processId": None, "rootUri": tmp_path.as_uri(),
            "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        assert result["capabilities"]["positionEncoding"] == "utf-8"
        client.notify("initialized", {})
        uri = _open(client, judge, JUDGE)
        (diag,) = [d for d in client.diagnostics(uri, 1) if d["code"] == "EL102"]
        bad = JUDGE.splitlines()[BAD_LINE]
        prefix = bad[:bad.index("system_prompt")]
        assert diag["range"]["start"] == {"line": BAD_LINE,
                                          "character": len(prefix.encode("utf-8"))}
        _shutdown(client)
    finally:
        client.close()


def test_odd_requests_get_empty_answers_not_a_crash(tmp_path: Path) -> None:
    judge = _project(tmp_path)
    client = _session([sys.executable, "-m", "evallint", "server"], tmp_path)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": "untitled:Untitled-1", "languageId": "markdown", "version": 1,
            "text": JUDGE}})
        uri = _open(client, judge, JUDGE)
        client.diagnostics(uri, 1)
        far = {"line": 999, "character": 999}
        assert client.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": far}) is None
        stray = {"range": {"start": far, "end": far}, "message": "?", "code": "EL999",
                 "source": "evallint", "data": {"index": 42}}
        assert client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": stray["range"],
            "context": {"diagnostics": [stray]}}) == []
        assert client.request("textDocument/codeAction", {
            "textDocument": {"uri": "untitled:Untitled-1"}, "range": stray["range"],
            "context": {"diagnostics": []}}) == []
        never_opened = (tmp_path / "missing.j2").as_uri()
        assert client.request("textDocument/hover", {
            "textDocument": {"uri": never_opened}, "position": far}) is None
        _shutdown(client)
    finally:
        client.close()
