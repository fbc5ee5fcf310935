"""The mock provider: ``evallint run --mock`` and ``evallint calibrate --mock``, offline.

Only the bottom of the stack is replaced. The executor's :class:`MessagesClient` is the one a
real run uses, and so is the ``anthropic`` SDK under it: the request body is built by
``MessagesClient.params``, serialised and sent by the SDK, and the reply is parsed by the SDK,
retried by ``MessagesClient.call`` (a scripted 429 or 529 is retried like a real one) and
costed by ``MessagesClient.result``. What is replaced is the SDK's HTTP transport: an
in-process one that answers ``POST /v1/messages`` (and the Message Batches endpoints) from
this module, so no socket is ever opened and no key is needed. Every model is priced at $0.

The mock is chosen on the command line only (``--mock``, ``--mock-script FILE``), never by a
spec, a model name or the environment: a spec is shared and committed, and a real run must
never turn into a mock one because of what a file says.

What it answers:

* scripted replies (``--mock-script``): rules read from YAML or JSONL, each selecting requests
  by ``role`` (generator | evaluator), ``case`` (a case id, or a calibration item's id) and
  ``match`` (text the request must contain), with replies used in order per case (the last
  one repeats). A request no rule selects gets the built-in reply (``unmatched: builtin``) or
  is an error (``unmatched: error``).
* built-in replies: the generator answers from the case. Its first attempt is half of the
  case's ``expected`` answer, every later attempt the whole of it, with a thinking block the
  executor must drop. The judge scores the answer in the scoring contract the evaluator prompt
  asks for (``score``, ``pass``, ``feedback``, ``rubric_scores`` with every rubric criterion,
  ``failure_category``, ``suggested_fix``): in ``run``, from the overlap of its words with
  ``expected`` (the share of the answer's words that are in it for accuracy-like criteria,
  the share of ``expected``'s words the answer has for completeness-like ones, their harmonic
  mean for the rest); in ``calibrate``, from the person's label of the answer it recognises
  (good about 0.9, bad about 0.15, a small deterministic spread per repeat, padding costs a
  little). The built-in judge reads an answer key no real judge has: it shows what the
  commands do, it proves nothing about a judge.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evallint.executor.errors import RunError, SpecError, read_text
from evallint.executor.plan import Plan, normalise_model

BASE_URL = "http://mock.evallint.invalid"  # never resolves: nothing here goes out anyway
API_KEY = "mock-provider-no-key"
ROLES = ("generator", "evaluator")
_RULE_KEYS = {"role", "case", "match", "reply", "replies"}
_REPLY_KEYS = {"text", "json", "thinking", "status", "retry_after", "message", "builtin"}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
_STOP = frozenset(("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is",
                   "it", "its", "of", "on", "or", "so", "that", "the", "this", "to", "with"))
_WORD = re.compile(r"[a-z0-9]+")
_ITEMS = "Items:\n"


# ---------------------------------------------------------------------------- the script


@dataclass(frozen=True)
class MockReply:
    """One scripted reply: a text (with an optional thinking block), an API error, or the
    built-in reply."""

    text: str = ""
    thinking: str | None = None
    status: int = 200
    retry_after: float | None = None
    message: str = ""
    builtin: bool = False  # {builtin: true}: the built-in generator's or judge's reply


@dataclass(frozen=True)
class Rule:
    replies: tuple[MockReply, ...]
    role: str | None = None
    case: str | None = None
    match: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Script:
    path: Path
    rules: tuple[Rule, ...]
    unmatched: str = "builtin"  # builtin | error


def load_script(path: Path) -> Script:
    """Read a reply script: JSONL (one rule per line) or YAML (a list of rules, or a mapping
    with ``rules`` and ``unmatched``). Errors name the file and line."""
    text = read_text(path, "mock script")
    shown = str(path)
    if path.suffix.lower() == ".jsonl":
        rules = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raise SpecError(f"not valid JSON: {exc}", shown, n) from None
            rules.append(_rule(raw, lambda msg, *_k, n=n: SpecError(msg, shown, n), n))
        return Script(path, tuple(rules))
    from evallint.executor.yamlmarks import load_located

    doc = load_located(text, shown)
    data = doc.value
    at: tuple[str, ...] = ()
    unmatched = "builtin"
    if isinstance(data, dict):
        unknown = set(data) - {"rules", "unmatched"}
        if unknown:
            raise doc.error(f"unknown key '{sorted(unknown)[0]}' (known: rules, unmatched)",
                            sorted(unknown)[0])
        unmatched = data.get("unmatched", "builtin")
        if unmatched not in ("builtin", "error"):
            raise doc.error("unmatched must be 'builtin' or 'error'", "unmatched")
        data, at = data.get("rules"), ("rules",)
    if not isinstance(data, list) or not data:
        raise doc.error("a mock script is a list of rules (role, case, match, replies)", *at)
    rules = []
    for i, raw in enumerate(data):
        def error(msg: str, *keys: str | int, i: int = i) -> SpecError:
            return doc.error(msg, *at, i, *keys)
        rules.append(_rule(raw, error, doc.line(*at, i)))
    return Script(path, tuple(rules), unmatched)


def describe(script: Script | None) -> str:
    """Where the mock's replies come from, in words."""
    if script is None:
        return "built-in replies"
    if script.unmatched == "builtin":
        return f"replies from {script.path}, the built-in ones for the rest"
    return f"replies from {script.path} only"


def _rule(raw: Any, error: Any, line: int | None) -> Rule:
    if not isinstance(raw, dict):
        raise error("a rule must be a mapping with 'reply' or 'replies'")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise error(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(_RULE_KEYS))})",
                    unknown[0])
    if ("reply" in raw) == ("replies" in raw):
        raise error("a rule needs 'reply' (one) or 'replies' (a list, used in order)")
    role = raw.get("role")
    if role is not None and role not in ROLES:
        raise error("role must be 'generator' or 'evaluator'", "role")
    for key in ("case", "match"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)
                                  or str(value) == ""):
            raise error(f"'{key}' must be a non-empty string", key)
    if "reply" in raw:
        replies = [_reply(raw["reply"], error, ("reply",))]
    else:
        items = raw["replies"]
        if not isinstance(items, list) or not items:
            raise error("'replies' must be a non-empty list", "replies")
        replies = [_reply(r, error, ("replies", j)) for j, r in enumerate(items)]
    return Rule(tuple(replies), role,
                None if raw.get("case") is None else str(raw["case"]),
                None if raw.get("match") is None else str(raw["match"]), line)


def _reply(raw: Any, error: Any, at: tuple[str | int, ...]) -> MockReply:
    if isinstance(raw, str):
        return MockReply(text=raw)
    if not isinstance(raw, dict):
        raise error("a reply is a text or a mapping (text, json, thinking, status)", *at)
    unknown = sorted(set(raw) - _REPLY_KEYS)
    if unknown:
        raise error(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(_REPLY_KEYS))})",
                    *at, unknown[0])
    if "builtin" in raw:
        if raw["builtin"] is not True or len(raw) > 1:
            raise error("'builtin: true' stands alone: the built-in reply", *at, "builtin")
        return MockReply(builtin=True)
    status = raw.get("status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599 \
            or 201 <= status <= 399:
        raise error("status must be 200 or an HTTP error status (400-599)", *at, "status")
    if "text" in raw and "json" in raw:
        raise error("a reply has 'text' or 'json', not both", *at)
    if status == 200 and "text" not in raw and "json" not in raw:
        raise error("a reply needs 'text' or 'json'", *at)
    if "text" in raw and not isinstance(raw["text"], str):
        raise error("'text' must be a string", *at, "text")
    text = raw["text"] if "text" in raw else (
        json.dumps(raw["json"], ensure_ascii=False) if "json" in raw else "")
    thinking = raw.get("thinking")
    if thinking is not None and not isinstance(thinking, str):
        raise error("'thinking' must be a string", *at, "thinking")
    after = raw.get("retry_after")
    if after is not None and (isinstance(after, bool) or not isinstance(after, int | float)
                              or not 0 <= after <= 60):
        raise error("'retry_after' is seconds, between 0 and 60", *at, "retry_after")
    return MockReply(text=text, thinking=thinking, status=status,
                     retry_after=None if after is None else float(after),
                     message=str(raw.get("message", "")))


# ---------------------------------------------------------------------------- what it knows


@dataclass
class Known:
    """One thing the mock can be asked about: a case of the loop or a calibration item.

    ``answers`` (calibration) maps each answer a person judged to its label score."""

    id: str
    input: Any
    expected: Any = None
    answers: dict[str, float] | None = None


@dataclass
class Asked:
    """A request as the mock reads it."""

    model: str
    system: str
    texts: list[tuple[str, str]]  # (role, text) of every message
    custom_id: str | None = None

    @property
    def first_user(self) -> str:
        return next((t for r, t in self.texts if r == "user"), "")

    @property
    def attempt(self) -> int:
        """The generator's attempt: one more than the answers it already gave."""
        return 1 + sum(1 for r, _ in self.texts if r == "assistant")

    @property
    def all_text(self) -> str:
        return "\n".join([self.system, *(t for _, t in self.texts)])


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content
                       if isinstance(b, dict) and b.get("type", "text") == "text")
    return ""


def read_request(body: dict[str, Any], custom_id: str | None = None) -> Asked:
    raw = body.get("messages")
    messages = raw if isinstance(raw, list) else []
    return Asked(model=str(body.get("model", "")), system=_content_text(body.get("system")),
                 texts=[(str(m.get("role")), _content_text(m.get("content")))
                        for m in messages if isinstance(m, dict)],
                 custom_id=custom_id)


def words(value: Any) -> set[str]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def overlap(answer: str, reference: Any) -> tuple[float, float, int, int]:
    """(precision, recall, reference words found, reference words) of ``answer``."""
    got, want = words(answer), words(reference)
    if not want:
        return (1.0, 1.0, 0, 0) if not got else (0.0, 1.0, 0, 0)
    hit = len(got & want)
    return (hit / len(got) if got else 0.0), hit / len(want), hit, len(want)


def _criterion(name: str, precision: float, recall: float) -> float:
    low = name.lower()
    if any(k in low for k in ("accura", "correct", "faithful", "precis", "factual")):
        return precision
    if any(k in low for k in ("complete", "coverage", "recall", "thorough")):
        return recall
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _spread(text: str, occurrence: int) -> float:
    """A deterministic number in [-0.04, 0.04] for the n-th grading of ``text``."""
    digest = hashlib.sha256(f"{occurrence}\0{text}".encode()).digest()
    return (int.from_bytes(digest[:4], "big") % 801 - 400) / 10_000


# ---------------------------------------------------------------------------- the provider


class MockProvider:
    """Answers the Messages requests of one run or calibration from a script and the built-in
    generator and judge. ``calls`` counts the requests answered (retries included)."""

    def __init__(self, plan: Plan, known: list[Known] | None, script: Script | None = None,
                 cases_path: Path | None = None) -> None:
        self.plan = plan
        self.script = script
        self.calls = 0
        self._known = {k.id: k for k in known} if known is not None else None
        self._cases_path = cases_path
        self._lines: dict[int, str] = {}
        self._used: dict[tuple[int, str], int] = {}
        self._seen: dict[tuple[str, str], int] = {}
        self._frames: dict[str, tuple[str, str] | None] = {}
        self._batches: dict[str, list[bytes]] = {}
        self._ids = itertools.count(1)
        self._run = uuid.uuid4().hex[:8]  # batch ids of another process are unknown here

    @classmethod
    def for_run(cls, plan: Plan, script: Path | None = None) -> MockProvider:
        """The mock of a loop run: it knows the cases file (read when first needed)."""
        return cls(plan, None, load_script(script) if script else None, plan.spec.cases)

    @classmethod
    def for_calibration(cls, plan: Plan, cases: Any, script: Path | None = None
                        ) -> MockProvider:
        """The mock of a calibration: it knows the person's label of every answer."""
        known = [Known(c.id, c.input, answers={c.output: c.score}) for c in cases.labelled]
        known += [Known(p.id, p.input, answers={p.preferred: 1.0, p.rejected: 0.0})
                  for p in cases.pairs]
        return cls(plan, known, load_script(script) if script else None)

    # ------------------------------------------------------------ what it knows
    def known(self) -> dict[str, Known]:
        if self._known is None:
            from evallint.executor.cases import iter_cases

            self._known = {}
            assert self._cases_path is not None
            for line, case in iter_cases(self._cases_path,
                                         need_output=self.plan.spec.batch_mode):
                self._known[case.id] = Known(case.id, case.input, case.expected)
                self._lines[line] = case.id
        return self._known

    def _case_id(self, asked: Asked) -> str | None:
        """The case a loop request belongs to: the worker's case, or the case line named by
        a batch request's custom_id (``l12-g2``)."""
        if asked.custom_id is not None:
            self.known()
            m = re.match(r"l(\d+)-", asked.custom_id)
            return self._lines.get(int(m.group(1))) if m else None
        from evallint.executor.batches import CURRENT_CASE

        found = CURRENT_CASE.get(None)
        return found[1] if found is not None else None

    def _frame(self, k: Known) -> tuple[str, str] | None:
        """The evaluator's user text for this input, split around the answer."""
        if k.id not in self._frames:
            marker = "\x00MOCK-ANSWER\x00"
            user = self.plan.render_evaluator(k.input, marker).user
            head, _, tail = user.partition(marker)
            self._frames[k.id] = (head, tail) if user.count(marker) == 1 else None
        return self._frames[k.id]

    def _graded(self, shown: str, hint: str | None) -> tuple[Known | None, str]:
        """Which case (or calibration item) an evaluator text is about, and the answer in it."""
        known = self.known()
        order = [known[hint]] if hint in known else []
        order += [k for k in known.values() if k.id != hint]
        for k in order:
            frame = self._frame(k)
            if frame is None:
                continue
            head, tail = frame
            if not (shown.startswith(head) and shown.endswith(tail)
                    and len(shown) >= len(head) + len(tail)):
                continue
            answer = shown[len(head):len(shown) - len(tail)]
            if k.answers is None or self._label(k, answer) is not None:
                return k, answer
        return (known.get(hint) if hint else None), shown

    @staticmethod
    def _label(k: Known, answer: str) -> tuple[float, bool] | None:
        """The person's label of ``answer`` and whether it was padded, when the mock knows it."""
        assert k.answers is not None
        if answer in k.answers:
            return k.answers[answer], False
        for text, label in sorted(k.answers.items(), key=lambda kv: -len(kv[0])):
            if answer.startswith(text):
                return label, True
        return None

    # ------------------------------------------------------------ built-in replies
    def builtin_generator(self, asked: Asked, case_id: str | None) -> MockReply:
        known = self.known()
        case = known.get(case_id) if case_id is not None else None
        if case is None:
            case = next((k for k in known.values() if self.plan.generator is not None
                         and self.plan.render_generator(k.input).user == asked.first_user),
                        None)
        if case is None:
            raise RunError("the mock generator got a request for no case it knows")
        target = case.expected if case.expected is not None else case.input
        full = target if isinstance(target, str) else json.dumps(target, ensure_ascii=False)
        if asked.attempt == 1:
            parts = full.split()
            answer = "In short: " + " ".join(parts[:max(1, math.ceil(len(parts) / 2))])
            note = f"mock: a first, partial answer for case {case.id}"
        else:
            answer = full
            note = f"mock: attempt {asked.attempt} for case {case.id}, using the feedback"
        tag = self.plan.spec.extract.answer_tag
        text = f"<{tag}>{answer}</{tag}>" if tag and not self.plan.spec.extract.pattern \
            else answer
        return MockReply(text=text, thinking=note)

    def verdict(self, shown: str, hint: str | None, asked_as: str = "") -> dict[str, Any]:
        """The built-in judge's verdict on one evaluator text, in the scoring contract.
        ``asked_as`` keeps the repeats of a side-by-side item apart from the pointwise ones."""
        k, answer = self._graded(shown, hint)
        spec = self.plan.spec
        hit: int | None = None
        total: int | None = None
        if k is not None and k.answers is not None:
            label, padded = self._label(k, answer) or (0.5, False)
            key = (asked_as, shown)
            n = self._seen[key] = self._seen.get(key, 0) + 1
            value = 0.15 + 0.75 * label + _spread(answer, n) - (0.05 if padded else 0.0)
            value = round(min(max(value, 0.0), 1.0), 4)
            precision = recall = value
            feedback = ("Clear and correct." if value >= spec.pass_threshold else
                        "The explanation gets the main idea wrong; correct it.")
            if padded:
                feedback += " The last paragraphs add nothing."
        else:
            reference = (k.expected if k is not None and k.expected is not None
                         else k.input if k is not None else "")
            precision, recall, hit, total = overlap(answer, reference)
        rubric = {name: round(_criterion(name, precision, recall), 4) for name in spec.rubric}
        if spec.rubric:
            weight = sum(spec.rubric.values())
            score = sum(rubric[n] * w for n, w in spec.rubric.items()) / weight
        else:
            score = _criterion("overall", precision, recall)
        score = round(score, 4)
        passed = score >= spec.pass_threshold
        if hit is not None:
            feedback = (f"The answer covers {hit} of the {total} key terms of a complete "
                        "answer" + ("." if passed else "; add the missing points."))
        category = None if passed else ("incomplete" if recall <= precision else "inaccurate")
        return {"score": score, "pass": passed, "feedback": feedback, "rubric_scores": rubric,
                "failure_category": category,
                "suggested_fix": None if passed else "Cover the missing points in one or two "
                                                     "plain sentences."}

    def builtin_evaluator(self, asked: Asked, case_id: str | None) -> MockReply:
        user = asked.first_user
        if user.startswith(_ITEMS):
            try:
                items, _ = json.JSONDecoder().raw_decode(user[len(_ITEMS):])
            except ValueError:
                items = []
            out = []
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, dict):
                    continue
                item_id = str(item.get("item_id"))
                hint = item_id if item_id in self.known() else None
                out.append({"item_id": item.get("item_id"),
                            **self.verdict(str(item.get("content", "")), hint,
                                           f"item {item_id}"),
                            "ambiguous": False})
            return MockReply(text=json.dumps(out, ensure_ascii=False))
        return MockReply(text=json.dumps(self.verdict(user, case_id), ensure_ascii=False))

    # ------------------------------------------------------------ one request
    def role_of(self, asked: Asked) -> str:
        gen = self.plan.generator
        if gen is not None and normalise_model(asked.model) == normalise_model(gen.model):
            return "generator"
        return "evaluator"

    def _ids_of(self, asked: Asked, role: str, case_id: str | None) -> list[str]:
        """The case ids a script's ``case`` may name for this request."""
        if role == "generator":
            return [case_id] if case_id else []
        user = asked.first_user
        if user.startswith(_ITEMS):
            try:
                items, _ = json.JSONDecoder().raw_decode(user[len(_ITEMS):])
            except ValueError:
                return []
            ids = []
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    hint = str(item.get("item_id"))
                    k, _ = self._graded(str(item.get("content", "")),
                                        hint if hint in self.known() else None)
                    if k is not None:
                        ids.append(k.id)
            return ids
        k, _ = self._graded(user, case_id)
        return [k.id] if k is not None else ([case_id] if case_id else [])

    def reply(self, asked: Asked) -> MockReply:
        self.calls += 1
        role = self.role_of(asked)
        case_id = self._case_id(asked)
        if self.script is not None:
            ids = self._ids_of(asked, role, case_id)
            text = asked.all_text
            for n, rule in enumerate(self.script.rules):
                if rule.role is not None and rule.role != role:
                    continue
                if rule.case is not None and rule.case not in ids:
                    continue
                if rule.match is not None and rule.match not in text:
                    continue
                key = (n, rule.case or (ids[0] if ids else ""))
                used = self._used[key] = self._used.get(key, 0) + 1
                chosen = rule.replies[min(used, len(rule.replies)) - 1]
                if not chosen.builtin:
                    return chosen
                break
            else:
                if self.script.unmatched == "error":
                    where = f" for case {ids[0]}" if ids else ""
                    raise RunError(f"{self.script.path}: no rule answers this {role} request"
                                   f"{where} (unmatched: error)")
        if role == "generator":
            return self.builtin_generator(asked, case_id)
        return self.builtin_evaluator(asked, case_id)

    # ------------------------------------------------------------ HTTP
    def message_body(self, asked: Asked, reply: MockReply) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.thinking is not None:
            content.append({"type": "thinking", "thinking": reply.thinking,
                            "signature": "mock"})
        content.append({"type": "text", "text": reply.text})
        return {"id": f"msg_mock_{next(self._ids):06d}", "type": "message",
                "role": "assistant", "model": asked.model, "content": content,
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": max(1, len(asked.all_text) // 4),
                          "output_tokens": max(1, (len(reply.text)
                                                   + len(reply.thinking or "")) // 4)}}

    @staticmethod
    def error_body(reply: MockReply) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.message
                                           or f"mock {reply.status} ({kind})"}}

    def handle(self, method: str, path: str, body: bytes
               ) -> tuple[int, dict[str, str], bytes]:
        """One HTTP exchange: (status, headers, body)."""
        def js(status: int, value: Any, headers: dict[str, str] | None = None
               ) -> tuple[int, dict[str, str], bytes]:
            return (status, {"content-type": "application/json", **(headers or {})},
                    json.dumps(value, ensure_ascii=False).encode("utf-8"))

        path = path.rstrip("/")
        try:
            return self._handle(method, path, body, js)
        except RunError as exc:  # the SDK would call an exception here a connection error
            return js(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": f"mock: {exc}"}})

    def _handle(self, method: str, path: str, body: bytes, js: Any
                ) -> tuple[int, dict[str, str], bytes]:
        if method == "POST" and path == "/v1/messages":
            asked = read_request(json.loads(body or b"{}"))
            reply = self.reply(asked)
            if reply.status != 200:
                headers = ({"retry-after": f"{reply.retry_after:g}"}
                           if reply.retry_after is not None else {})
                return js(reply.status, self.error_body(reply), headers)
            return js(200, self.message_body(asked, reply))
        if method == "POST" and path == "/v1/messages/batches":
            return js(200, self._submit(json.loads(body or b"{}")))
        m = re.fullmatch(r"/v1/messages/batches/([\w-]+)(/results)?", path)
        if method == "GET" and m and m.group(1) in self._batches:
            if m.group(2):
                return (200, {"content-type": "application/binary"},
                        b"".join(self._batches[m.group(1)]))
            return js(200, self._batch(m.group(1)))
        return js(404, {"type": "error", "error": {"type": "not_found_error",
                                                   "message": f"mock: no {method} {path}"}})

    def _submit(self, body: dict[str, Any]) -> dict[str, Any]:
        """A message batch, answered at once: every request through :meth:`reply`."""
        batch_id = f"msgbatch_mock_{self._run}_{len(self._batches) + 1:04d}"
        lines = []
        for item in body.get("requests") or []:
            custom_id = str(item.get("custom_id"))
            asked = read_request(item.get("params") or {}, custom_id)
            reply = self.reply(asked)
            if reply.status == 200:
                result: dict[str, Any] = {"type": "succeeded",
                                          "message": self.message_body(asked, reply)}
            else:
                result = {"type": "errored", "error": {**self.error_body(reply),
                                                       "request_id": "req_mock"}}
            lines.append(json.dumps({"custom_id": custom_id, "result": result},
                                    ensure_ascii=False).encode("utf-8") + b"\n")
        self._batches[batch_id] = lines
        return self._batch(batch_id)

    def _batch(self, batch_id: str) -> dict[str, Any]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        for line in self._batches[batch_id]:
            counts[json.loads(line)["result"]["type"]] += 1
        stamp = "2025-01-01T00:00:00Z"
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended",
                "request_counts": counts, "created_at": stamp, "ended_at": stamp,
                "expires_at": stamp, "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{BASE_URL}/v1/messages/batches/{batch_id}/results"}

    def http_client(self, timeout_s: float) -> Any:
        """An HTTP client for the SDK whose transport is this object: no socket, ever."""
        return _http_client(self, timeout_s)

    def sdk(self, timeout_s: float) -> Any:
        """A real ``AsyncAnthropic`` client whose requests this object answers."""
        return mock_sdk(self, timeout_s)


def _httpx() -> Any:
    """The HTTP library the installed SDK is built on (``httpx``, or its successor)."""
    import anthropic._base_client as base

    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if module is not None and hasattr(module, "AsyncBaseTransport"):
            return module
    raise RunError("the installed anthropic SDK does not expose its HTTP library; --mock "
                   "cannot plug in under it")


def _http_client(provider: MockProvider, timeout_s: float) -> Any:
    hx = _httpx()

    class InProcess(hx.AsyncBaseTransport):  # type: ignore[name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            body = await request.aread()
            status, headers, payload = provider.handle(request.method, request.url.path, body)
            return hx.Response(status, headers=headers, content=payload, request=request)

    return hx.AsyncClient(transport=InProcess(), timeout=timeout_s)


def mock_sdk(provider: MockProvider, timeout_s: float) -> Any:
    """A real ``AsyncAnthropic`` client whose requests are answered by ``provider``."""
    import anthropic

    sdk = anthropic.AsyncAnthropic(api_key=API_KEY, base_url=BASE_URL, max_retries=0,
                                   timeout=timeout_s,
                                   http_client=provider.http_client(timeout_s))
    # The SDK looks its platform up in a worker thread on the first request; settled here, the
    # order in which a mock run's cases finish does not depend on thread timing.
    try:
        from anthropic._base_client import get_platform

        if getattr(sdk, "_platform", "") is None:
            sdk._platform = get_platform()
    except Exception:  # an SDK without it: only the order of progress lines may vary
        pass
    return sdk


def mock_results(results: Path) -> Path:
    """Where a mock run writes when no --results is given: a ``mock`` folder beside the spec's
    results, so a real run never resumes from mock records."""
    return results.parent / "mock" / results.name
