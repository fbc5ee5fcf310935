"""The pygls server: diagnostics, quick fixes and rule hovers for evallint.

Lint runs happen off the event loop (a worker thread) one at a time; a change schedules a run
after a short quiet period (``debounce``), and a change that arrives during a run schedules
exactly one more. Every run lints all open documents with the workspace around them (see
:mod:`evallint.server.workspace`), so an edit in one file updates cross-file findings shown in
another open file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.server import LanguageServer

import evallint
from evallint.discovery import CANDIDATE_SUFFIXES
from evallint.findings import Finding, Related, Severity
from evallint.fixing import Fix, TextEdit, fix_for
from evallint.registry import RuleMeta
from evallint.server.positions import UTF16, Lines
from evallint.server.workspace import Outcome, WorkspaceLinter

SOURCE = "evallint"
FIX_ALL = "source.fixAll.evallint"
DEFAULT_DEBOUNCE = 0.3  # seconds of quiet after a keystroke before a run
EXIT_WAIT = 10.0  # seconds a run in flight at shutdown may take to end before it is cut short
_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
}
_CODE_TOKEN = re.compile(r"[A-Z][A-Z0-9_]*[0-9]")
# Files whose change on disk can change a finding in an open file: the kinds evallint reads,
# its configuration and policy packs (all YAML or TOML).
WATCHED = "**/*.{" + ",".join(sorted({s.lstrip(".") for s in CANDIDATE_SUFFIXES} | {"toml"})) + "}"


@dataclass
class Shown:
    """What the client was last sent for one document: the text the findings were computed
    on (a fix is offered only while the buffer still has exactly that text)."""

    version: int | None
    text: str
    findings: list[Finding]
    diagnostics: list[lsp.Diagnostic]


@dataclass
class _Runner:
    """Debounced, serialised lint runs."""

    timer: asyncio.TimerHandle | None = None
    running: bool = False
    again: bool = False
    said: set[str] = field(default_factory=set)  # errors and warnings shown, while they last
    in_flight: concurrent.futures.Future[Outcome] | None = None
    closing: bool = False  # shut down: no more runs


class EvallintServer(LanguageServer):
    """A LanguageServer with evallint's per-workspace state."""

    def __init__(self) -> None:
        super().__init__("evallint", evallint.__version__)
        self.linter: WorkspaceLinter | None = None
        self.debounce = DEFAULT_DEBOUNCE
        self.doc_url: str | None = None
        self.shown: dict[str, Shown] = {}
        self.runner = _Runner()
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="evallint-lint")

    def finish(self, timeout: float = EXIT_WAIT) -> None:
        """At shutdown: start no more runs, and let a run in flight end (its worker processes
        stop with it) for up to ``timeout`` seconds; then stop any child process still left.
        Nothing may outlive the server: a worker left running would hold the editor's pipes
        open, and an editor waits for them to close before it calls the server gone."""
        self.runner.closing = True
        if self.runner.timer is not None:
            self.runner.timer.cancel()
            self.runner.timer = None
        if self.runner.in_flight is not None:
            concurrent.futures.wait([self.runner.in_flight], timeout=timeout)
        self.executor.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.kill()
            child.join(timeout=2)

    # -------------------------------------------------------------- scheduling

    def relist(self) -> None:
        """The next run lists the project's files again (they may have changed)."""
        if self.linter is not None:
            self.linter.stale()

    def schedule(self, delay: float) -> None:
        """Run the linter after ``delay`` seconds unless another change comes first."""
        if self.runner.timer is not None:
            self.runner.timer.cancel()
        self.runner.timer = self.loop.call_later(delay, self._start)

    def _start(self) -> None:
        self.runner.timer = None
        if self.runner.closing:
            return
        if self.runner.running:
            self.runner.again = True
            return
        if self.linter is None:
            return
        snapshot = {doc.uri: (doc.path, doc.version, doc.source)
                    for doc in self.workspace.text_documents.values()
                    if doc.uri.startswith("file:")}
        if not snapshot:
            return
        self.runner.running = True
        texts = {path: text for path, _, text in snapshot.values()}
        self.runner.in_flight = self.executor.submit(self.linter.lint, texts)
        future = asyncio.wrap_future(self.runner.in_flight, loop=self.loop)
        future.add_done_callback(lambda fut: self._finished(fut, snapshot))

    def _finished(self, fut: asyncio.Future[Outcome],
                  snapshot: dict[str, tuple[str, int | None, str]]) -> None:
        self.runner.running = False
        if self.runner.closing:
            return
        try:
            try:
                outcome = fut.result()
            except Exception as exc:  # a bug must not take the editor's server down
                outcome = Outcome(errors=[f"internal error: {type(exc).__name__}: {exc}"])
            self._report(outcome)
            self._publish(outcome, snapshot)
        except Exception as exc:
            self.show_message_log(f"evallint: internal error: {type(exc).__name__}: {exc}",
                                  lsp.MessageType.Error)
        finally:
            if self.runner.again:
                self.runner.again = False
                self._start()

    def _publish(self, outcome: Outcome,
                 snapshot: dict[str, tuple[str, int | None, str]]) -> None:
        """Diagnostics for every document of the run that is still open, at its version."""
        encoding = self.encoding()
        files = _FileLines({path: text for path, _, text in snapshot.values()})
        open_uris = {doc.uri for doc in self.workspace.text_documents.values()}
        for uri, (path, version, text) in snapshot.items():
            if uri not in open_uris:
                continue
            findings = outcome.findings.get(path, [])
            diags = [self.diagnostic(f, i, files, encoding, outcome.metas)
                     for i, f in enumerate(findings)]
            self.shown[uri] = Shown(version, text, findings, diags)
            self.publish_diagnostics(uri, diags, version)

    def _report(self, outcome: Outcome) -> None:
        """Tool errors and warnings go to the user once each while they last, not after every
        keystroke: errors as a message and in the log, warnings in the log."""
        said = self.runner.said
        self.runner.said = set(outcome.errors) | set(outcome.warnings)
        for warning in dict.fromkeys(outcome.warnings):
            if warning not in said:
                self.show_message_log(f"evallint: warning: {warning}", lsp.MessageType.Warning)
        for error in dict.fromkeys(outcome.errors):
            if error not in said:
                self.show_message_log(f"evallint: error: {error}", lsp.MessageType.Error)
                self.show_message(f"evallint: {error}", lsp.MessageType.Error)

    # -------------------------------------------------------------- conversions

    def encoding(self) -> str:
        """The negotiated position encoding ('utf-16' unless the client offered another)."""
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or UTF16)

    def diagnostic(self, f: Finding, index: int, files: _FileLines, encoding: str,
                   metas: dict[str, RuleMeta]) -> lsp.Diagnostic:
        """One finding as an LSP diagnostic. A notebook finding (``cell``) sits on the first
        line of the .ipynb text with its cell and line named: the JSON text the editor holds
        has no simple mapping to a cell's lines."""
        path = os.path.realpath(f.path)
        message = f.message
        if f.cell is not None:
            message = f"cell {f.cell}, line {f.line}: {message}"
            rng = files.range(path, 1, 1, None, None, encoding)
        else:
            rng = files.range(path, f.line, f.column, f.end_line, f.end_column, encoding)
        meta = metas.get(f.code)
        href = self.rule_url(f.code)
        return lsp.Diagnostic(
            range=rng,
            message=message,
            severity=_SEVERITY.get(f.severity, lsp.DiagnosticSeverity.Error),
            code=f.code,
            code_description=lsp.CodeDescription(href=href) if href else None,
            source=SOURCE,
            related_information=[self.related(r, files, encoding) for r in f.related] or None,
            data={"index": index, "name": meta.name if meta else f.name},
        )

    def related(self, r: Related, files: _FileLines,
                encoding: str) -> lsp.DiagnosticRelatedInformation:
        path = os.path.realpath(r.path)
        if r.cell is not None:
            rng = files.range(path, 1, 1, None, None, encoding)
            message = f"cell {r.cell}, line {r.line}: {r.message}"
        else:
            rng = files.range(path, r.line, r.column, None, None, encoding)
            message = r.message
        return lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=Path(path).as_uri(), range=rng), message=message)

    def rule_url(self, code: str) -> str | None:
        """Where a rule's documentation is: the client's ``ruleDocs`` template, else the
        distribution's documentation URL, else the rules page shipped inside the package
        (:func:`evallint.rulemeta.rule_doc_url`, which SARIF's ``helpUri`` uses too)."""
        from evallint.rulemeta import RuleDataError, rule_doc_url

        try:
            return rule_doc_url(code, self.doc_url)
        except RuleDataError:  # an incomplete installation: no rules, no links
            return None

    def text_edits(self, fix: Fix, text: str, encoding: str) -> list[lsp.TextEdit]:
        lines = Lines(text)
        return [_edit(lines, e, encoding) for e in fix.edits]


def _edit(lines: Lines, edit: TextEdit, encoding: str) -> lsp.TextEdit:
    start = lines.client_position(edit.start, encoding)
    end = lines.client_position(edit.end, encoding)
    return lsp.TextEdit(range=lsp.Range(start=lsp.Position(*start), end=lsp.Position(*end)),
                        new_text=edit.new_text)


class _FileLines:
    """Line texts by absolute path for the conversions of one run: open buffers first, then
    the disk (read once, bounded; an unreadable file keeps character columns)."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.lines = {os.path.realpath(p): Lines(t) for p, t in texts.items()}

    def get(self, path: str) -> Lines:
        if path not in self.lines:
            from evallint.source import read_bounded

            try:
                text = read_bounded(path, 2_000_000).decode("utf-8", "replace")
            except OSError:
                text = ""
            self.lines[path] = Lines(text)
        return self.lines[path]

    def range(self, path: str, line: int, column: int, end_line: int | None,
              end_column: int | None, encoding: str) -> lsp.Range:
        """A finding's 1-based position as a client range. Without an end, the range covers
        the word at the position (at least one character), so the squiggle is visible."""
        lines = self.get(path)
        row, col = max(line - 1, 0), max(column - 1, 0)
        text = lines.line(row)
        if end_line is not None and end_line >= line:
            end_row = end_line - 1
            end_text = lines.line(end_row)
            end_col = end_column - 1 if end_column else len(end_text)
            if (end_row, end_col) < (row, col):
                end_row, end_text, end_col = row, text, col
        else:
            end_row, end_text, end_col = row, text, col
            while end_col < len(text) and not text[end_col].isspace():
                end_col += 1
            if end_col == col:
                end_col = min(col + 1, len(text))
        start = lsp.Position(row, _client(text, col, encoding))
        end = lsp.Position(end_row, _client(end_text, end_col, encoding))
        return lsp.Range(start=start, end=end)


def _client(text: str, column: int, encoding: str) -> int:
    from evallint.server.positions import to_client

    return to_client(text, column, encoding)


def _contains(rng: lsp.Range, pos: lsp.Position) -> bool:
    start, end = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    return start <= (pos.line, pos.character) <= end


def hover_text(meta: RuleMeta, url: str | None) -> str:
    """A rule in markdown: code, name, severity, summary and the fix from its metadata."""
    head = f"**{meta.code}** `{meta.name}` · {meta.severity.value}"
    if meta.invariant:
        head += f" · invariant {meta.invariant}"
    parts = [head, "", meta.summary]
    if meta.fix.strip():
        parts += ["", "**Use instead**", "", "```", meta.fix.strip("\n"), "```"]
    if url:
        parts += ["", f"[Rule documentation]({url})"]
    return "\n".join(parts)


def build_server() -> EvallintServer:
    """The server with its handlers registered (a new one per call, for tests)."""
    server = EvallintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: EvallintServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        root = ls.workspace.root_path
        if not root and params.workspace_folders:  # a client that sends folders only
            from pygls.uris import to_fs_path

            root = to_fs_path(params.workspace_folders[0].uri)
        configure(ls, root, options if isinstance(options, dict) else {})

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: EvallintServer, params: lsp.InitializedParams) -> None:
        watch = ls.client_capabilities.workspace
        watch_files = watch.did_change_watched_files if watch else None
        if watch_files is not None and watch_files.dynamic_registration:
            ls.register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
                id="evallint-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[lsp.FileSystemWatcher(glob_pattern=WATCHED)]))]))
        if ls.workspace.text_documents:
            ls.schedule(0)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: EvallintServer, params: Any) -> None:
        ls.finish()  # before the reply: the client sends exit once it has it

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: EvallintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.relist()
        ls.schedule(ls.debounce)  # a file or the config changed on disk (a pull, a checkout)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: EvallintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.relist()
        ls.schedule(0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: EvallintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: EvallintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.relist()
        ls.schedule(0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: EvallintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.shown.pop(uri, None)
        ls.publish_diagnostics(uri, [])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: EvallintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return _code_actions(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: EvallintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return _hover(ls, params)

    return server


def configure(ls: EvallintServer, root: str | None, options: dict[str, Any]) -> None:
    """Set up the linter for the workspace ``root`` with the client's
    ``initializationOptions``: ``project`` (analyse the workspace around the open files,
    default true), ``cache`` (default true), ``debounce`` (seconds, default 0.3) and
    ``ruleDocs`` (a URL template with ``{code}`` or ``{anchor}``)."""
    if root and os.path.isdir(root):
        os.chdir(root)  # finding paths are relative to the root, as for `check .`
    base = Path(root).resolve() if root and os.path.isdir(root) else Path.cwd()
    ls.linter = WorkspaceLinter(base, project=bool(options.get("project", True)),
                                use_cache=bool(options.get("cache", True)))
    debounce = options.get("debounce")
    if isinstance(debounce, (int, float)) and 0 <= debounce <= 10:
        ls.debounce = float(debounce)
    docs = options.get("ruleDocs")
    ls.doc_url = docs if isinstance(docs, str) and docs else None


def _finding_of(shown: Shown, diag: lsp.Diagnostic) -> Finding | None:
    """The finding behind a diagnostic the client sends back: by the index kept in ``data``,
    else by code and range (a client that drops ``data``)."""
    data = diag.data if isinstance(diag.data, dict) else {}
    index = data.get("index")
    if (isinstance(index, int) and 0 <= index < len(shown.findings)
            and shown.findings[index].code == diag.code):
        return shown.findings[index]
    for f, d in zip(shown.findings, shown.diagnostics, strict=True):
        if d.code == diag.code and d.range == diag.range:
            return f
    return None


def _safe_fix(finding: Finding, text: str) -> Fix | None:
    try:
        return fix_for(finding, text)
    except Exception:  # a fixer that breaks on odd text offers nothing, never a crash
        return None


def _code_actions(ls: EvallintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    shown = ls.shown.get(uri)
    doc = ls.workspace.text_documents.get(uri)
    if shown is None or doc is None or doc.source != shown.text:
        return []  # the buffer moved on: offsets would be wrong; new diagnostics are coming
    only = list(params.context.only or [])
    wants_quick = not only or any(str(getattr(k, "value", k)).startswith("quickfix")
                                  for k in only)
    wants_all = bool(only) and any(FIX_ALL.startswith(str(getattr(k, "value", k)))
                                   for k in only)
    encoding = ls.encoding()
    actions: list[lsp.CodeAction] = []
    if wants_quick:
        for diag in params.context.diagnostics:
            if diag.source != SOURCE:
                continue
            finding = _finding_of(shown, diag)
            fix = _safe_fix(finding, shown.text) if finding else None
            if fix is None or not fix.edits:
                continue
            actions.append(lsp.CodeAction(
                title=f"{fix.title} ({fix.code})" + ("" if fix.safe else " [unsafe]"),
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=fix.safe,
                edit=lsp.WorkspaceEdit(changes={uri: ls.text_edits(fix, shown.text, encoding)})))
    if wants_all:
        edits: list[TextEdit] = []
        for f in shown.findings:
            fix = _safe_fix(f, shown.text)
            if fix is not None and fix.safe:
                edits.extend(fix.edits)
        kept = _non_overlapping(edits)
        if kept:
            lines = Lines(shown.text)
            actions.append(lsp.CodeAction(
                title="evallint: apply all safe fixes", kind=FIX_ALL,
                edit=lsp.WorkspaceEdit(changes={uri: [_edit(lines, e, encoding) for e in kept]})))
    return actions


def _non_overlapping(edits: list[TextEdit]) -> list[TextEdit]:
    """Edits in position order without overlaps (as ``apply_edits`` keeps them): a client
    rejects a WorkspaceEdit whose edits overlap."""
    kept: list[TextEdit] = []
    cursor = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if kept and e.start < cursor:
            continue
        kept.append(e)
        cursor = e.end
    return kept


def _hover(ls: EvallintServer, params: lsp.HoverParams) -> lsp.Hover | None:
    """The rule behind a diagnostic under the cursor, or behind a code in a suppression
    comment (``evallint: ignore[EL102]``)."""
    metas = ls.linter.metas if ls.linter is not None else {}
    if not metas:
        from evallint.registry import load_rules

        metas = dict(load_rules())
    uri, pos = params.text_document.uri, params.position
    codes: list[str] = []
    rng: lsp.Range | None = None
    doc = ls.workspace.text_documents.get(uri)
    if doc is None:  # never opened: nothing was linted there
        return None
    lines = Lines(doc.source)
    text = lines.line(pos.line)
    if "evallint:" in text:  # a code in a suppression comment comes first
        encoding = ls.encoding()
        column = lines.offset(pos.line, pos.character, encoding) - lines.offset(pos.line, 0)
        for m in _CODE_TOKEN.finditer(text):
            if m.start() <= column <= m.end() and m.group() in metas:
                codes.append(m.group())
                rng = lsp.Range(start=lsp.Position(pos.line, _client(text, m.start(), encoding)),
                                end=lsp.Position(pos.line, _client(text, m.end(), encoding)))
    shown = ls.shown.get(uri)
    notes: dict[str, list[str]] = {}  # code -> why evallint reads the file this way
    pairs = zip(shown.findings, shown.diagnostics, strict=True) if shown else iter(())
    for f, d in pairs:
        if not (_contains(d.range, pos) and isinstance(d.code, str)):
            continue
        if d.code not in codes:
            codes.append(d.code)
        rng = rng or d.range
        extra = notes.setdefault(d.code, [])
        said = [f"evidence: {e}" for e in f.evidence] + ([f"fix: {f.fix}"] if f.fix else [])
        extra += [line for line in said if line not in extra]
    found = [metas[c] for c in codes if c in metas]
    if not found:
        return None
    body = "\n\n---\n\n".join(
        hover_text(m, ls.rule_url(m.code))
        + "".join(f"\n\n{line}" for line in notes.get(m.code, []))
        for m in found)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=body),
                     range=rng)


def serve() -> None:
    """Serve one client over stdin/stdout until it sends exit.

    The protocol streams are private duplicates of fds 0 and 1; ``sys.stdin`` becomes
    /dev/null and ``sys.stdout`` stderr, and so do fds 0 and 1 themselves. A forked worker
    process closes ``sys.stdin`` as it starts, which would wait forever on the lock the
    protocol's reader thread holds while it blocks in a read; and a stray print (or a write to
    fd 1) must never corrupt the JSON-RPC stream. A forked child gets /dev/null in place of the
    protocol's descriptors: it never holds the editor's pipes open. After exit (or end of
    input) a lint in flight ends before the process does (:meth:`EvallintServer.finish`)."""
    rfd, wfd = os.dup(sys.stdin.fileno()), os.dup(sys.stdout.fileno())
    rfile = os.fdopen(rfd, "rb")
    wfile = os.fdopen(wfd, "wb")
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(sys.stderr.fileno(), 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr

    def release_protocol() -> None:  # in a forked child
        for fd in (rfd, wfd):
            os.dup2(null, fd)

    os.register_at_fork(after_in_child=release_protocol)
    server = build_server()
    try:
        server.start_io(rfile, wfile)  # type: ignore[arg-type]
    finally:
        server.finish()
