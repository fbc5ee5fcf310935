"""The pipeline: discover → parse (front-ends) → file checks → project checks → suppress.

Per-file work (read, parse, file checks) is pure and cached by content hash; it runs in worker
processes when there is enough of it. Cross-file checks run once, in the main process, over the
facts of every file.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import evallint
from evallint import datacodec, fileindex, globs, policy, reads, suppress
from evallint.cache import (
    ENV_CACHE_DIR,
    CacheUnavailable,
    Store,
    load_key,
    open_folder,
    resolve_folder,
)
from evallint.config import Config
from evallint.confine import run_roots
from evallint.discovery import UNCLASSIFIED, UNCLASSIFIED_MESSAGE, FileTask, discover
from evallint.facts import FileFacts, Pos
from evallint.fileindex import FileIndex, content_digest
from evallint.findings import Finding, Severity
from evallint.frontend import FRONTENDS, ParseError
from evallint.kinds import FileKind
from evallint.policy import all_metas
from evallint.registry import (
    FILE_CHECKS,
    PROJECT_CHECKS,
    Context,
    Project,
    RuleMeta,
    load_checks,
    preload_solver,
    selected_codes,
)
from evallint.source import SourceError, decode, read_bounded, utf8_bytes

UNPARSABLE = "EL901"
UNUSED_SUPPRESSION = "EL902"
UNKNOWN_SUPPRESSION = "EL903"
UNREASONED_SUPPRESSION = "EL904"
PARALLEL_THRESHOLD = 48  # below this many files one worker process does it all


@dataclass
class FileResult:
    """What one file contributed: its facts (None if unreadable), findings, suppressions."""

    task: FileTask
    facts: FileFacts | None
    findings: list[Finding]
    suppressions: list[suppress.Suppression]
    internal_error: str | None = None
    cached: bool = False
    cacheable: bool = True
    payload: bytes | None = None  # the cache entry, encoded by the worker
    apart: bytes | None = None  # its code tree, encoded to be stored apart (see _part_key)
    deps: list[reads.Dependency] = field(default_factory=list)  # other files the facts read


@dataclass
class RunResult:
    """The outcome of ``evallint check``."""

    findings: list[Finding]
    files: list[FileTask]
    tool_errors: list[str] = field(default_factory=list)
    cached_files: int = 0
    project: Project | None = None
    warnings: list[str] = field(default_factory=list)  # shown on stderr; the run goes on
    context_files: int = 0  # files read only as the project around the files asked for

    def failed(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        floor = Severity(fail_on).rank
        return any(f.severity.rank >= floor for f in self.findings)


NOTEBOOK_FACTOR = 16


def read_limit(task: FileTask, config: Config) -> int:
    """Bytes read of a file at most. A notebook carries its outputs (images, tables) beside
    the code: it may be ``NOTEBOOK_FACTOR`` times ``max-file-size`` on disk, since only its
    code cells are analysed; any other file over the limit is EL901, never silently skipped
    (padding a judge template must not hide it from the check)."""
    if task.kind == FileKind.NOTEBOOK.value:
        return config.max_file_size * NOTEBOOK_FACTOR
    return config.max_file_size


class _Analyzer:
    """Per-process state for analysing files: config, context and enabled checks built once."""

    def __init__(self, config: Config, enabled: set[str],
                 kinds: Iterable[str] | None = None) -> None:
        load_checks(kinds, part="worker")  # a forked worker may have them all already
        self.config = config
        self.metas = all_metas(config)
        self.ctx = Context(config, self.metas, enabled)
        self.enabled = enabled

    def analyze(self, task: FileTask) -> FileResult:
        if task.kind == UNCLASSIFIED:  # its kind could not be read within the budget
            result = self._unparsable(
                task, UNCLASSIFIED_MESSAGE.format(budget=self.config.time_budget), Pos(1, 1))
            result.cacheable = False  # a timeout depends on the machine's load
            return result
        try:
            data = read_bounded(task.abspath, read_limit(task, self.config))
        except OSError as exc:
            return self._unparsable(task, f"cannot read file: {exc.strerror or exc}", Pos(1, 1))
        return self.analyze_bytes(task, data)

    def analyze_bytes(self, task: FileTask, data: bytes) -> FileResult:
        try:
            text = decode(data, read_limit(task, self.config))
        except SourceError as exc:
            return self._unparsable(task, exc.message, Pos(exc.line, exc.column))
        from evallint.source import SourceFile

        source = SourceFile(path=Path(task.abspath), rel=task.path, text=text,
                            data=utf8_bytes(data, text))
        parse = FRONTENDS.get(task.kind)
        if parse is None:  # a kind this analyser was not set up for: its checks load now
            load_checks((task.kind,), part="worker")
            parse = FRONTENDS.get(task.kind)
        if parse is None:
            return FileResult(task, None, [], [])
        try:
            with reads.recording() as deps:
                facts = parse(source, self.config)
        except ParseError as exc:
            result = self._unparsable(task, exc.message, Pos(exc.line, exc.column, exc.cell))
            result.suppressions = suppress.scan(text)
            return result
        except RecursionError:
            return self._unparsable(task, "too deeply nested to analyse (recursion limit)", None)
        except Exception as exc:  # a bug in a front-end must not stop the run
            return FileResult(task, None, [], [], internal_error=_describe(exc))
        findings: list[Finding] = []
        for check in FILE_CHECKS:
            if task.kind not in check.kinds or not (set(check.codes) & self.enabled):
                continue
            try:
                findings.extend(f for f in check.fn(facts, self.ctx) if f.code in self.enabled)
            except Exception as exc:
                return FileResult(task, facts, findings, [], internal_error=_describe(exc))
        if self.config.policy_rules:
            findings.extend(policy.check(facts, self.ctx, self.config.policy_rules))
        sups = facts.suppressions if facts.suppressions is not None else suppress.scan(text)
        # Facts that read other files (a config's templates) are cached with their digests.
        return FileResult(task, facts, findings, sups, deps=deps)

    def _unparsable(self, task: FileTask, message: str, pos: Pos | None) -> FileResult:
        f = self.ctx.finding(UNPARSABLE, task.path, pos, message)
        return FileResult(task, None, [f] if UNPARSABLE in self.enabled else [], [])


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


Job = FileTask | tuple[FileTask, bytes]  # a file to read, or a name and its text (stdin)


def _analyzer_for(config: Config, enabled: set[str], encode: bool,
                  kinds: frozenset[str]) -> Callable[[Job], FileResult]:
    """A worker's per-file function (module level so that it also pickles for ``spawn``).
    ``encode``: the run caches, so the worker also encodes the cache entry (in parallel,
    where the facts are still plain objects), and the parent only signs and writes it."""
    analyzer = _Analyzer(config, enabled, kinds)

    def handle(job: Job) -> FileResult:
        result = analyzer.analyze_bytes(*job) if isinstance(job, tuple) else analyzer.analyze(job)
        if encode and result.cacheable and not result.internal_error:
            try:
                result.payload, parts = datacodec.encode_parts(
                    (result.facts, result.findings, result.suppressions, result.deps))
            except datacodec.CodecError:
                result.cacheable = False
            else:
                result.apart = parts[0] if len(parts) == 1 else None
                result.cacheable = len(parts) <= 1  # (one object with a lazy part: the facts)
        return result

    return handle


def analyze_supervised(tasks: list[Job], config: Config, enabled: set[str],
                       workers: int, encode: bool = False,
                       meanwhile: Callable[[], None] | None = None) -> list[FileResult]:
    """Analyse ``tasks`` in supervised worker processes (see :mod:`evallint.workers`): a file
    that kills its worker or runs past the time budget is EL901 for that file alone.
    (multiprocessing is imported here, not at start-up: a run the cache answers needs none.)"""
    from evallint.workers import Failure, supervise

    kinds = frozenset((job[0] if isinstance(job, tuple) else job).kind for job in tasks)
    if min(workers, len(tasks)) > 1:
        load_checks(kinds)  # before the forks: the workers inherit what is imported once here
    # else the one worker imports its front-ends and file checks while the parent goes on
    out: list[FileResult | None] = [None] * len(tasks)
    reporter: _Analyzer | None = None
    setup = functools.partial(_analyzer_for, config, enabled, encode, kinds)
    for i, res in supervise(tasks, setup, workers=workers, budget=config.time_budget,
                            meanwhile=meanwhile):
        if isinstance(res, Failure):
            reporter = reporter or _Analyzer(config, enabled, kinds)
            job = tasks[i]
            res = reporter._unparsable(job[0] if isinstance(job, tuple) else job, res.message,
                                       None)
            res.cacheable = False  # a timeout depends on the machine's load
        out[i] = res
    return [r for r in out if r is not None]


def _code_salt() -> str:
    """Changes whenever evallint's own code or rule data changes (editable installs too).

    Hashes contents, not modification times: a checkout, a reinstall or a touch must not turn
    every warm run cold (about a millisecond for the whole package).
    """
    global _SALT
    if _SALT is None:
        h = hashlib.sha256(evallint.__version__.encode())
        pkg = Path(evallint.__file__).parent
        from evallint.registry import rules_dir

        for folder in (pkg, rules_dir()):
            for p in sorted(folder.rglob("*")):
                if p.suffix in (".py", ".yaml"):
                    h.update(p.name.encode() + b"\0" + p.read_bytes())
        _SALT = h.hexdigest()
    return _SALT


_SALT: str | None = None


def open_cache(config: Config, enabled: set[str], override: str | None) -> tuple[Store | None,
                                                                                   str | None]:
    """The run's cache store, or None and the reason caching is off (a warning, not an error).

    Entries are bound to the project they describe: the salt holds the project root's real
    path, so that two projects sharing one cache folder (``EVALLINT_CACHE_DIR``) never answer
    for each other, even with files of the same relative path and text."""
    override = override or os.environ.get(ENV_CACHE_DIR) or None
    try:
        top = resolve_folder(config.root, config.cache_dir, override)
        key = load_key(config.root)
        folder = open_folder(top, "v2")
    except CacheUnavailable as exc:
        return None, f"result cache off: {exc}"
    salt = "|".join([_code_salt(), config.fingerprint(), ",".join(sorted(enabled)),
                     os.path.realpath(config.root)])
    return Store(folder, key, salt), None


def enabled_codes(config: Config, metas: dict[str, RuleMeta], select: list[str] | None = None,
                  extend_select: list[str] | None = None,
                  ignore: list[str] | None = None) -> set[str]:
    """The rule codes this run reports, CLI options taking precedence over config."""
    sel = select if select else config.select
    ext = list(config.extend_select) + list(extend_select or [])
    ign = list(config.ignore) + list(ignore or [])
    return selected_codes(metas, sel, ext, ign)


def run_stdin(name: str, data: bytes, config: Config, enabled: set[str]) -> RunResult:
    """Lint text from standard input as if it were the file ``name`` (editor integrations)."""
    from evallint.discovery import classify_path

    kind = classify_path(Path(name), config)
    if kind is None:
        return RunResult(findings=[], files=[])
    task = FileTask(path=name, abspath=str(Path(name).resolve()), kind=kind)
    (result,) = analyze_supervised([(task, data)], config, enabled, 1)
    return _finish([result], config, all_metas(config), enabled, 0)


def in_project(files: list[str], config: Config) -> bool:
    """Whether a check of ``files`` runs with their project around it: every path named is a
    file (pre-commit and editors pass changed files by name), so cross-file rules (a judge's
    model against its generator's, a template's includes) need the files they did not name."""
    return bool(files) and all(os.path.isfile(f) for f in files)


def run_files(files: list[str], config: Config, enabled: set[str], *,
              jobs: int | None = None, use_cache: bool = True, cache_dir: str | None = None,
              stdin_text: bytes | None = None) -> RunResult:
    """Check ``files`` as part of their project, reporting only on them.

    The run is ``evallint check`` over the project root (with the result cache, a warm run
    over the files that did not change costs little), plus each named file the listing
    leaves out (excluded, ignored, or outside the root: named, so checked); the findings
    are those in the named files, and ``context_files`` says how many others were read.
    ``stdin_text`` stands for the one named file's text (``--stdin-filename``): that file
    is analysed from it and never cached."""
    wanted = {os.path.realpath(f) for f in files}
    root = str(config.root)
    if stdin_text is not None:
        warnings: list[str] = []
        tasks = discover([root], config, warnings)
        name = files[0]
        found = [t for t in tasks if os.path.realpath(t.abspath) in wanted]
        if not found:
            from evallint.discovery import classify_path

            kind = classify_path(Path(name), config)
            if kind is None:
                return RunResult(findings=[], files=[])
            found = [FileTask(path=name, abspath=os.path.abspath(name), kind=kind)]
            tasks.append(found[0])
        buffers = {found[0].abspath: stdin_text.decode("utf-8", "surrogateescape")}
        run = run_check([root], config, enabled, jobs=jobs, use_cache=use_cache,
                        cache_dir=cache_dir, tasks=tasks, buffers=buffers)
        run.warnings = warnings + run.warnings
    else:
        run = run_check([root, *files], config, enabled, jobs=jobs, use_cache=use_cache,
                        cache_dir=cache_dir, whole=True)
    named = [t for t in run.files if os.path.realpath(t.abspath) in wanted]
    run.context_files = len(run.files) - len(named)
    run.findings = [f for f in run.findings if os.path.realpath(f.path) in wanted]
    run.cached_files = min(run.cached_files, len(named))
    run.files = named
    return run


@contextmanager
def few_collections() -> Iterator[None]:
    """Fewer runs of the cyclic garbage collector while a check runs.

    A check builds millions of small objects that form no cycles (syntax trees, the IR, facts);
    with the default thresholds the collector rescans the live ones again and again, which was
    a third of the per-file time on real trees. Start-up objects are frozen out of its sight,
    and a collection waits for 50,000 allocations instead of 700. Forked workers inherit this.
    """
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def run_check(
    paths: list[str],
    config: Config,
    enabled: set[str],
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    cache_dir: str | None = None,
    tasks: list[FileTask] | None = None,
    buffers: dict[str, str] | None = None,
    whole: bool = False,
) -> RunResult:
    """Lint ``paths`` and return every finding after suppressions.

    ``buffers`` maps a task's absolute path to text that replaces the file on disk (an editor's
    unsaved document); such a file is never read from or written to the cache, which keeps
    serving every other file. ``whole``: the caller needs only the findings and files, so a
    cached run over the very same files (and the same other files they read) may answer for
    the whole run; its result then has no ``project``."""
    with few_collections():
        cache, why = open_cache(config, enabled, cache_dir) if use_cache else (None, None)
        try:
            return _run_check(paths, config, enabled, jobs=jobs, cache=cache,
                              warnings=[why] if why else [], tasks=tasks, buffers=buffers,
                              whole=whole)
        finally:
            if cache is not None:
                cache.close()


def _run_check(paths: list[str], config: Config, enabled: set[str], *, jobs: int | None,
               cache: Store | None, warnings: list[str], tasks: list[FileTask] | None,
               buffers: dict[str, str] | None, whole: bool) -> RunResult:
    metas = all_metas(config)
    config.read_roots = run_roots(config.root, paths)  # what named files may be read under
    index_key = cache.entry_key("file index", str(config.root)) if cache is not None else ""
    index = fileindex.load(cache, index_key) if cache is not None else FileIndex()
    run_key = None
    if tasks is None:
        tasks = discover(paths, config, warnings, index=index)
        if cache is not None and whole and not buffers:
            run_key = _run_key(cache, index, tasks, config)
            answer = _run_from_entry(tasks, cache.get(RUNS, run_key), index) if run_key else None
            if answer is not None:
                index.save(cache, index_key)
                answer.warnings = warnings + ([cache.problem] if cache.problem else [])
                return answer  # no check was imported: analysis and _finish load them

    results: list[FileResult | None] = [None] * len(tasks)
    todo: list[tuple[int, str | None]] = []
    jobs_in: list[Job] = []
    stored: list[tuple[int, str, str]] = []  # entries to read while the workers run (and
    # the file's digest they were stored under)
    for i, task in enumerate(tasks):
        key = None
        text = buffers.get(task.abspath) if buffers else None
        if text is not None:
            todo.append((i, None))
            jobs_in.append((task, text.encode("utf-8", "surrogatepass")))
            continue
        if cache is not None:
            digest, _ = index.digest(task.abspath, read_limit(task, config))
            if digest is None:
                todo.append((i, None))
                jobs_in.append(task)
                continue
            key = cache.entry_key(task.kind, task.path, digest)
            if cache.has("files", key):
                stored.append((i, key, digest))
                continue
        todo.append((i, key))
        jobs_in.append(task)

    late: list[tuple[int, str]] = []  # stored but unusable: a file it read changed, or
    # the entry is not one this key signed

    def meanwhile() -> None:
        """The parent's own work while the workers analyse the other files: the project
        checks imported, the cached results authenticated and decoded."""
        load_checks({t.kind for t in tasks}, part="parent")
        if cache is not None:
            for i, key, digest in stored:
                hit = _from_entry(tasks[i], cache.get("files", key), index)
                if hit is not None and _attach_part(hit, cache, key, digest, config):
                    results[i] = hit
                else:
                    late.append((i, key))
        preload_solver({task.kind for task in (tasks[i] for i, _ in todo)})

    pool = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    fresh = analyze_supervised(jobs_in, config, enabled,
                               pool if len(jobs_in) >= PARALLEL_THRESHOLD else 1,
                               encode=cache is not None,
                               meanwhile=meanwhile)
    if late:
        todo += late
        again: list[Job] = [tasks[i] for i, _ in late]
        fresh += analyze_supervised(again, config, enabled,
                                    pool if len(again) >= PARALLEL_THRESHOLD else 1,
                                    encode=cache is not None)
    for (i, key), res in zip(todo, fresh, strict=True):
        results[i] = res
        if (cache is not None and key is not None and not res.internal_error
                and res.cacheable):
            if res.payload is not None:
                cache.put_encoded("files", key, res.payload)
                if res.apart is not None:
                    cache.put_encoded("files", _part_key(cache, key), res.apart)
            res.payload = res.apart = None
    cached = len(stored) - len(late)
    final = [r for r in results if r is not None]
    with reads.recording() as project_deps:
        run = _finish(final, config, metas, enabled, cached,
                      cache=cache if cache is not None and cache.enabled else None,
                      workers=pool)
    run.warnings = warnings + run.warnings
    if cache is not None:
        if run_key and not run.tool_errors and all(r.cacheable for r in final):
            deps = sorted({d for r in final for d in r.deps} | set(project_deps))
            cache.put(RUNS, run_key, (run.findings, deps), replace_all=True)
        cache.flush()  # the new entries, as one pack
        index.save(cache, index_key)
        if cache.problem:
            run.warnings.append(cache.problem)
    return run


RUNS = "runs"  # one entry: the last whole run's findings, keyed on every file it checked


def _run_key(cache: Store, index: FileIndex, tasks: list[FileTask],
             config: Config) -> str | None:
    """The key of a whole run over ``tasks`` as they are now (None: a file cannot be read)."""
    parts: list[str] = []
    for task in tasks:
        digest, _ = index.digest(task.abspath, read_limit(task, config))
        if digest is None:
            return None
        parts.append(f"{task.kind}\0{task.path}\0{task.abspath}\0{digest}")
    return cache.entry_key("run", *parts)


def _run_from_entry(tasks: list[FileTask], entry: object, index: FileIndex) -> RunResult | None:
    """A cached whole run as this run's result; None if malformed or a file any front-end or
    check read besides the checked files has changed since."""
    if not (isinstance(entry, tuple) and len(entry) == 2):
        return None
    findings, deps = entry
    if not (isinstance(findings, list) and all(isinstance(f, Finding) for f in findings)
            and reads.well_formed(deps) and reads.still_valid(deps, index)):
        return None
    return RunResult(findings=findings, files=tasks, cached_files=len(tasks))


def _from_entry(task: FileTask, entry: object, index: FileIndex) -> FileResult | None:
    """A cached (facts, findings, suppressions, dependencies) entry as a result; None if it
    is malformed or a file the facts read has changed since."""
    if not (isinstance(entry, tuple) and len(entry) == 4):
        return None
    facts, findings, sups, deps = entry
    if not ((facts is None or isinstance(facts, FileFacts))
            and isinstance(findings, list) and all(isinstance(f, Finding) for f in findings)
            and isinstance(sups, list)
            and all(isinstance(s, suppress.Suppression) for s in sups)
            and reads.well_formed(deps) and reads.still_valid(deps, index)):
        return None
    return FileResult(task, facts, findings, sups, cached=True, deps=deps)


def _part_key(cache: Store, key: str) -> str:
    """Where the code tree of the file entry under ``key`` is stored: apart, since a run
    after an edit reads every entry and decodes almost no tree (on deepeval 7 of the 9 MB of
    entries are trees, and each byte read is authenticated)."""
    return cache.entry_key("lazy part", key)


def _attach_part(hit: FileResult, cache: Store, key: str, digest: str,
                 config: Config) -> bool:
    """Give facts whose code tree is stored apart the way to read it when the analysis asks
    for it; False when it is not stored (the entry is then no use: the file is read again).
    A tree found unreadable then (a damaged or foreign entry) is made again from the file,
    if the file still holds the text it was made from."""
    facts = hit.facts
    if facts is None or not datacodec.detached(facts):
        return True
    part = _part_key(cache, key)
    if not cache.has("files", part):
        return False

    size = len(getattr(type(facts), "__lazy_fields__", ()))

    def load() -> object:
        found = cache.get("files", part)
        if isinstance(found, tuple) and len(found) == size:
            return found
        return _part_again(hit.task, config, digest, facts)

    datacodec.attach(facts, load)
    return True


def _part_again(task: FileTask, config: Config, digest: str, facts: FileFacts) -> object:
    """The lazy part of ``facts`` made again from the file, read once and parsed only when
    its digest is still the one the facts were stored under (those bytes parsed in a worker
    before); CodecError when the file changed or cannot be read."""
    from evallint.source import SourceFile

    limit = read_limit(task, config)
    try:
        data = read_bounded(task.abspath, limit)
        if content_digest(data) != digest:
            raise datacodec.CodecError(f"{task.path} changed while it was checked")
        load_checks((task.kind,), part="worker")
        text = decode(data, limit)
        source = SourceFile(path=Path(task.abspath), rel=task.path, text=text,
                            data=utf8_bytes(data, text))
        again = FRONTENDS[task.kind](source, config)
    except (OSError, SourceError, ParseError, RecursionError, KeyError) as exc:
        raise datacodec.CodecError(f"{task.path}: its code tree cannot be made again "
                                   f"({_describe(exc)})") from None
    if type(again) is not type(facts):
        raise datacodec.CodecError(f"{task.path}: its code tree cannot be made again")
    return datacodec.lazy_values(again)


def _finish(
    results: list[FileResult],
    config: Config,
    metas: dict[str, RuleMeta],
    enabled: set[str],
    cached: int,
    cache: Store | None = None,
    workers: int = 1,
) -> RunResult:
    from evallint.deadline import BudgetExceeded, time_limit

    load_checks({r.task.kind for r in results}, part="parent")  # the project checks
    tool_errors = [f"{r.task.path}: internal error: {r.internal_error}" for r in results
                   if r.internal_error]
    project = Project(
        files={r.task.path: r.facts for r in results if r.facts is not None}, config=config
    )
    ctx = Context(config, metas, enabled)
    ctx.cache = cache
    ctx.workers = workers
    by_path: dict[str, list[Finding]] = {r.task.path: list(r.findings) for r in results}
    try:
        with time_limit(config.project_time_budget):
            for check in PROJECT_CHECKS:
                if not (set(check.codes) & enabled):
                    continue
                try:
                    for f in check.fn(project, ctx):
                        if f.code in enabled:
                            by_path.setdefault(f.path, []).append(f)
                except Exception as exc:
                    if os.environ.get("EVALLINT_DEBUG"):
                        traceback.print_exc()
                    tool_errors.append(f"internal error in project check {check.codes}: "
                                       f"{_describe(exc)}")
    except BudgetExceeded:
        tool_errors.append(
            f"the project analysis took longer than its time budget of "
            f"{config.project_time_budget:g} s (project-time-budget): cross-file findings are "
            "incomplete")

    out: list[Finding] = []
    sups_by_path = {r.task.path: r.suppressions for r in results}
    for path, findings in by_path.items():
        ignored: list[str] = []
        if findings and config.per_file_ignores:
            rel = config.root_relative(path)
            ignored = [c for pat, codes in config.per_file_ignores.items()
                       if globs.match(rel, pat) for c in codes]
        sups = sups_by_path.get(path, [])
        for f in findings:
            if any(f.code.startswith(c.upper()) for c in ignored):
                continue
            hit = next((s for s in sups if s.covers(f.code, f.line, f.cell)), None)
            if hit is not None:
                hit.used.add(f.code)
                continue
            out.append(f)
        out.extend(_suppression_findings(path, sups, ctx, metas, enabled))
    out.sort(key=Finding.sort_key)
    # one problem is one finding, however many checks (or templates made of one string)
    # arrived at it: the same rule, place and message
    out = [f for i, f in enumerate(out) if i == 0 or f.sort_key() != out[i - 1].sort_key()]
    return RunResult(findings=out, files=[r.task for r in results], tool_errors=tool_errors,
                     cached_files=cached, project=project)


def _suppression_findings(path: str, sups: list[suppress.Suppression], ctx: Context,
                          metas: dict[str, RuleMeta], enabled: set[str]) -> list[Finding]:
    out = []
    for s in sups:
        pos = Pos(s.line, s.column, s.cell)
        unknown = [c for c in s.codes if not any(m.startswith(c) for m in metas)]
        if unknown and UNKNOWN_SUPPRESSION in enabled:
            out.append(ctx.finding(UNKNOWN_SUPPRESSION, path, pos,
                                   f"suppression names unknown rule {', '.join(unknown)}"))
        if not s.reason and UNREASONED_SUPPRESSION in enabled:
            out.append(ctx.finding(UNREASONED_SUPPRESSION, path, pos,
                                   "suppression gives no reason: after `--`, say why the "
                                   "finding is safe to ignore here"))
        if UNUSED_SUPPRESSION not in enabled:
            continue
        if not s.codes:
            if not s.used:
                out.append(ctx.finding(UNUSED_SUPPRESSION, path, pos,
                                       "unused suppression: it silences no finding"))
            continue
        unused = [c for c in s.codes if c not in unknown
                  and not any(u.startswith(c) for u in s.used)
                  and any(e.startswith(c) for e in enabled)]
        if unused:
            out.append(ctx.finding(UNUSED_SUPPRESSION, path, pos,
                                   f"unused suppression for {', '.join(unused)}"))
    return out
