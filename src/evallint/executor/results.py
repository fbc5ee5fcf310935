"""``results.jsonl``: append-only, one fsynced line per finished case, resumable after a kill.

A crash can leave at most one torn line at the end (records are written in one ``write`` and
fsynced before the next). On resume the torn tail is cut off, the finished case ids are read,
and only the missing cases run: nothing lost, nothing twice. A broken line that is *not* the
last is someone else's edit, and stops the run with its line number rather than being guessed at.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from evallint.executor.errors import SpecError
from evallint.safefs import write_output

RESULT_VERSION = "1.0"


class DurableLines:
    """An append-only text file, opened at the first line: each line is flushed and fsynced
    before :meth:`write` returns, so a crash loses at most the line being written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def write(self, line: str) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = _open_append(self.path)
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _open_append(path: Path) -> IO[str]:
    """``path`` opened to append, never through a symlink (a committed ``results.jsonl ->
    ~/.bashrc`` must not receive our records) and only when it is a regular file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise OSError(f"{path} is a symlink: records are not written through one") \
                from None
        raise exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return os.fdopen(fd, "a", encoding="utf-8")


class ResultsStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished: set[str] = set()
        self.repaired_tail = False
        self._out = DurableLines(path)

    def prepare(self, *, resume: bool, provider: str = "anthropic") -> None:
        """Make the file ready to append: read finished ids (resume) or set the old file aside.

        A file of another provider's records is not resumed: a real run must not count cases
        the mock provider answered as done, nor a mock run add to a real run's records."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            return
        if not resume:
            stamp = time.strftime("%Y%m%dT%H%M%S")
            self.path.rename(self.path.with_name(f"{self.path.stem}.{stamp}{self.path.suffix}"))
            return
        self._cut_torn_tail()
        for n, record in iter_records(self.path):
            if str(record.get("provider", "anthropic")) != provider:
                who = "mock-provider" if provider == "anthropic" else "real"
                raise SpecError(f"this results file holds {who} records; this run would "
                                "count their cases as done: name another file with --results "
                                "(or set it aside with --no-resume)", str(self.path), n)
            self.finished.add(str(record.get("case_id")))

    def _cut_torn_tail(self) -> None:
        """Drop a last line that a crash left unfinished (no newline, or not JSON)."""
        with self.path.open("rb+") as fh:
            data = fh.read()
            if not data:
                return
            keep = len(data)
            if not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
            else:
                start = data.rfind(b"\n", 0, len(data) - 1) + 1
                try:
                    json.loads(data[start:])
                except ValueError:
                    keep = start
            if keep != len(data):
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
                self.repaired_tail = True

    def append(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n")
        # ``finished`` stays the set read at start: case ids are unique in the cases file, and
        # a set that grew with every record would make memory grow with the number of cases.

    def close(self) -> None:
        self._out.close()


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record with its line number; a bad line is a SpecError naming it."""
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # nesting too deep is not a record either
                raise SpecError("results file has a line that is not JSON (edited by hand?)",
                                str(path), n) from None
            if not isinstance(record, dict) or "case_id" not in record:
                raise SpecError("results line is not an eval-result record", str(path), n)
            yield n, record


def write_summary(results: Path, extra: dict[str, Any]) -> Path:
    """Aggregate the whole results file (all runs) into ``summary.json`` beside it, atomically.

    One streaming pass: memory does not grow with the number of cases beyond the top-failures
    list and counters."""
    total = passed = scored = parse_errors = ambiguous = 0
    score_sum = attempts_sum = cost = 0.0
    statuses: dict[str, int] = {}
    categories: dict[str, int] = {}
    cost_by_model: dict[str, float] = {}
    runs: list[str] = []
    worst: list[tuple[float, str, dict[str, Any]]] = []
    if results.exists():
        for _, r in iter_records(results):
            total += 1
            passed += bool(r.get("pass"))
            if isinstance(r.get("score"), int | float):
                scored += 1
                score_sum += r["score"]
            attempts_sum += r.get("attempts") or 0
            cost += r.get("total_cost_usd") or 0.0
            status = str(r.get("status"))
            statuses[status] = statuses.get(status, 0) + 1
            parse_errors += bool(r.get("parse_error"))
            ambiguous += bool(r.get("ambiguous"))
            if r.get("run_id") and r["run_id"] not in runs:
                runs.append(r["run_id"])
            for line in (r.get("cost_breakdown") or {}).values():
                model = str(line.get("model"))
                cost_by_model[model] = round(cost_by_model.get(model, 0.0)
                                             + (line.get("cost_usd") or 0.0), 8)
            if not r.get("pass"):
                category = r.get("failure_category") or "uncategorised"
                categories[category] = categories.get(category, 0) + 1
                key = r["score"] if isinstance(r.get("score"), int | float) else -1.0
                worst.append((key, str(r["case_id"]), {
                    "case_id": r["case_id"], "score": r.get("score"),
                    "failure_category": r.get("failure_category"),
                    "feedback": str(r.get("feedback") or "")[:300]}))
                worst.sort(key=lambda t: (t[0], t[1]))
                del worst[10:]
    summary = {
        "version": RESULT_VERSION,
        "results": str(results),
        "cases": total,
        "passed": passed,
        "pass_rate": round(passed / total, 4) if total else None,
        "average_score": round(score_sum / scored, 4) if scored else None,
        "average_attempts": round(attempts_sum / total, 3) if total else None,
        "total_cost_usd": round(cost, 6),
        "cost_by_model": cost_by_model,
        "status_counts": statuses,
        "failure_breakdown": dict(sorted(categories.items(), key=lambda kv: -kv[1])),
        "top_failures": [w[2] for w in worst],
        "parse_errors": parse_errors,
        "ambiguous": ambiguous,
        "run_ids": runs,
        **extra,
    }
    out = results.with_name("summary.json")
    write_output(out, (json.dumps(summary, indent=2) + "\n").encode("utf-8"), out.parent)
    return out
