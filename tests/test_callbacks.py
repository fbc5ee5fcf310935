"""Functions handed to a project helper that runs them: the helper is the loop or the
harness, the steps are the caller's (see :mod:`evallint.pyflow.callbacks`). Each shape has a
variant that must stay clean or keep apart what two call sites hand over."""

from __future__ import annotations

import os
from pathlib import Path

from evallint.findings import Finding
from evallint.frontends.python_front import build_facts
from evallint.pyflow.project import _step_runners
from evallint.pyflow.summaries import Tables
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files


def _found(tmp_path: Path, codes: set[str]) -> list[Finding]:
    return sorted(lint_tree(tmp_path, codes).findings, key=lambda f: (f.path, f.line, f.code))


def _at(found: list[Finding]) -> list[tuple[str, str, int]]:
    return [(f.code, f.path, f.line) for f in found]


# A loop helper with no LLM call of its own, handed three nested functions.
PY_LOOP = """\
def polish(start, evaluate, redo, limit=4):
    piece = start()
    for _ in range(limit):
        notes = evaluate(piece)
        if notes.startswith("FINE"):
            break
        piece = redo(piece, notes)
    return piece
"""

PY_APP = """\
from openai import OpenAI
from kit.cycle import polish

api = OpenAI()


def essay(subject):
    def start():
        r = api.chat.completions.create(model="gpt-4o", messages=[
            {"role": "user", "content": f"An essay on {subject}"}])
        return r.choices[0].message.content

    def appraise(piece):
        r = api.chat.completions.create(model="gpt-4o", messages=[
            {"role": "system",
             "content": "You are a strict grader. Reply FINE or list the faults."},
            {"role": "user", "content": piece}])
        return r.choices[0].message.content

    def redo(piece, notes):
        r = api.chat.completions.create(model="gpt-4o", messages=[
            {"role": "user", "content": f"Fix {piece} given {notes}"}])
        return r.choices[0].message.content

    return polish(start, appraise, redo)
"""


def test_a_python_loop_helper_runs_the_steps_it_is_handed(tmp_path: Path) -> None:
    write_files(tmp_path, {"kit/__init__.py": "", "kit/cycle.py": PY_LOOP, "app.py": PY_APP})
    found = _found(tmp_path, {"EL301", "EL502"})
    same = [f for f in found if f.code == "EL301"]
    assert [(f.path, f.line) for f in same] == [("app.py", 14)]
    assert same[0].severity.value == "error" and "paired by place" not in same[0].message
    assert same[0].related and same[0].related[0].path == "kit/cycle.py"
    assert ("EL502", "kit/cycle.py", 8) in _at(found)  # the helper returns the last piece
    # the grader on another family: no finding of the same model; the loop is still the loop
    write_files(tmp_path, {"app.py": PY_APP.replace(
        'model="gpt-4o", messages=[\n            {"role": "system",',
        'model="claude-sonnet-4-5", messages=[\n            {"role": "system",')})
    found = _found(tmp_path, {"EL301", "EL502"})
    assert _at(found) == [("EL502", "kit/cycle.py", 8)]


def test_without_the_steps_handed_over_the_helper_is_nothing(tmp_path: Path) -> None:
    write_files(tmp_path, {"kit/__init__.py": "", "kit/cycle.py": PY_LOOP, "app.py": """\
from kit.cycle import polish


def run():
    return polish(str, len, max)
"""})
    assert _found(tmp_path, {"EL301", "EL501", "EL502", "EL503"}) == []


# TypeScript: a generate/evaluate/refine helper given arrow functions at two call sites.
TS_RECURSE = """\
export async function iterate<T>(
  make: (round: number) => Promise<T>,
  rate: (item: T) => Promise<{ mark: number; advice: string; item: T }>,
  mend: (item: T, advice: string) => Promise<T>,
  opts?: { rounds?: number; pass?: number },
) {
  const rounds = opts?.rounds ?? 3;
  let round = 1;
  let current = await make(round);
  let rated = await rate(current);
  while (rated.mark < (opts?.pass ?? 0.7) && round < rounds) {
    current = await mend(rated.item, rated.advice);
    round += 1;
    rated = await rate(current);
  }
  return { item: rated.item, mark: rated.mark };
}
"""

TS_QUALITY = """\
import OpenAI from "openai";
const llm = new OpenAI();

export async function qualityOf(goal: string, text: string) {
  const res = await llm.chat.completions.create({
    model: "MODEL_Q",
    messages: [
      { role: "system", content: "You are a strict evaluator. Return JSON {score, feedback}." },
      { role: "user", content: `Goal: ${goal}\\n<text>${text}</text>` },
    ],
  });
  const body = JSON.parse(res.choices[0].message.content ?? "{}");
  return { score: Number(body.score), feedback: String(body.feedback) };
}
"""

TS_SITE = """\
import OpenAI from "openai";
import { iterate } from "../core/iterate";
import { qualityOf } from "../core/quality";
const llm = new OpenAI();

export async function NAME(topic: string) {
  const out = await iterate<string>(
    async () => {
      const r = await llm.chat.completions.create({ model: "MODEL_G",
        messages: [{ role: "user", content: `Write about ${topic}` }] });
      return r.choices[0].message.content ?? "";
    },
    async (text) => {
      const q = await qualityOf("A clear post", text);
      return { mark: q.score, advice: q.feedback, item: text };
    },
    async (text, advice) => {
      const r = await llm.chat.completions.create({ model: "MODEL_G",
        messages: [{ role: "user", content: `Improve ${text}: ${advice}` }] });
      return r.choices[0].message.content ?? "";
    },
    { rounds: 3 },
  );
  return out.item;
}
"""


def _ts_tree(tmp_path: Path, judge: str, sites: dict[str, str]) -> None:
    files = {"src/core/iterate.ts": TS_RECURSE,
             "src/core/quality.ts": TS_QUALITY.replace("MODEL_Q", judge)}
    for name, model in sites.items():
        files[f"src/app/{name}.ts"] = TS_SITE.replace("NAME", name).replace("MODEL_G", model)
    write_files(tmp_path, files)


def test_a_typescript_refine_helper_handed_arrow_functions(tmp_path: Path) -> None:
    _ts_tree(tmp_path, "gpt-4.1", {"newsletter": "gpt-4.1"})
    found = _found(tmp_path, {"EL301", "EL502"})
    same = [f for f in found if f.code == "EL301"]
    assert [(f.path, f.line) for f in same] == [("src/core/quality.ts", 5)]
    assert same[0].severity.value == "error" and "paired by place" not in same[0].message
    assert ("EL502", "src/core/iterate.ts", 16) in _at(found)
    _ts_tree(tmp_path, "claude-sonnet-4-5", {"newsletter": "gpt-4.1"})
    assert [f.code for f in _found(tmp_path, {"EL301", "EL502"})] == ["EL502"]


# the same caller, its judge written inline (its own model) and a refine step with no call
TS_INLINE_JUDGE = TS_SITE.replace("""\
      const q = await qualityOf("A clear post", text);
      return { mark: q.score, advice: q.feedback, item: text };""", """\
      const r = await llm.chat.completions.create({ model: "MODEL_J", messages: [
        { role: "system", content: "You are a strict grader. Return JSON {mark, advice}." },
        { role: "user", content: `<post>${text}</post>` }] });
      const v = JSON.parse(r.choices[0].message.content ?? "{}");
      return { mark: Number(v.mark), advice: String(v.advice), item: text };""").replace(
    """\
    async (text, advice) => {
      const r = await llm.chat.completions.create({ model: "MODEL_G",
        messages: [{ role: "user", content: `Improve ${text}: ${advice}` }] });
      return r.choices[0].message.content ?? "";
    },""", "    async (text, advice) => text + advice,")
assert "MODEL_J" in TS_INLINE_JUDGE and "text + advice" in TS_INLINE_JUDGE


def _site(name: str, writer: str, judge: str) -> str:
    return TS_INLINE_JUDGE.replace("NAME", name).replace("MODEL_G", writer).replace(
        "MODEL_J", judge)


def test_two_call_sites_keep_their_own_steps(tmp_path: Path) -> None:
    # each site's judge is on the other site's writer's model: one joined run of the helper
    # for both sites would pair each judge with the other site's writer
    write_files(tmp_path, {"src/core/iterate.ts": TS_RECURSE,
                           "src/app/digest.ts": _site("digest", "gpt-4.1", "claude-sonnet-4-5"),
                           "src/app/recap.ts": _site("recap", "claude-sonnet-4-5", "gpt-4.1")})
    assert _found(tmp_path, {"EL301"}) == []
    write_files(tmp_path, {"src/app/recap.ts": _site("recap", "gpt-4.1", "gpt-4.1")})
    assert [(f.code, f.path, f.line, f.severity.value) for f in _found(tmp_path, {"EL301"})] \
        == [("EL301", "src/app/recap.ts", 14, "error")]


# A test harness handing the task on to a per-case runner that grades its output.
TS_RUNNER = """\
import Anthropic from "@anthropic-ai/sdk";
const claude = new Anthropic();

async function gradeAgainst(actual: unknown, expected: unknown) {
  const msg = await claude.messages.create({
    model: "claude-sonnet-4-5", max_tokens: 400,
    system: "Judge whether the actual output matches the expected one. Answer with a score 0-1.",
    messages: [{ role: "user", content: `<actual>${JSON.stringify(actual)}</actual>
<expected>${JSON.stringify(expected)}</expected>` }],
  });
  return msg.content[0].type === "text" ? Number(msg.content[0].text) : 0;
}

export async function checkOne(sample: { input: string; want: string },
                               subject: (input: string) => Promise<unknown>) {
  const got = await subject(sample.input);
  return gradeAgainst(got, sample.want);
}

export async function checkAll(samples: { input: string; want: string }[],
                               subject: (input: string) => Promise<unknown>) {
  const marks: number[] = [];
  for (const s of samples) marks.push(await checkOne(s, subject));
  return marks;
}
"""

TS_SUITE = """\
import Anthropic from "@anthropic-ai/sdk";
import { checkAll } from "./runner";
const claude = new Anthropic();

async function summarise(input: string) {
  const msg = await claude.messages.create({ model: "MODEL_T", max_tokens: 300,
    messages: [{ role: "user", content: `Summarise: ${input}` }] });
  return msg.content[0].type === "text" ? msg.content[0].text : "";
}

export const marks = checkAll([{ input: "a long text", want: "a summary" }], summarise);
"""


def test_a_task_handed_through_two_helpers_is_graded_by_the_second(tmp_path: Path) -> None:
    write_files(tmp_path, {"evals/runner.ts": TS_RUNNER,
                           "evals/suite.ts": TS_SUITE.replace("MODEL_T", "claude-sonnet-4-5")})
    same = [f for f in _found(tmp_path, {"EL301"}) if f.code == "EL301"]
    assert ("evals/runner.ts", 5) in [(f.path, f.line) for f in same]
    assert all(f.severity.value == "error" and "paired by place" not in f.message for f in same)
    write_files(tmp_path, {"evals/suite.ts": TS_SUITE.replace("MODEL_T", "gpt-4o")})
    assert _found(tmp_path, {"EL301"}) == []


# A handed function reading what the helper returned (a closure over the caller's locals):
# the value comes round on every run; the analysis still ends, with the same findings.
TS_ROUND = """\
import OpenAI from "openai";
import { iterate } from "../core/iterate";
import { qualityOf } from "../core/quality";
const llm = new OpenAI();

export async function looped(topic: string) {
  let state: any = { topic, notes: "" };
  const { item } = await iterate<any>(
    async () => ({ ...state, text: await llm.responses.create({ model: "gpt-4.1",
                   input: `Write on ${state.topic}` }) }),
    async (s) => {
      const q = await qualityOf("good", s.text);
      return { mark: q.score, advice: q.feedback, item: s };
    },
    async (s, advice) => ({ ...state, ...s, notes: advice }),
  );
  state = item;
  return state;
}
"""


def test_a_closure_over_the_helpers_result_ends(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/core/iterate.ts": TS_RECURSE,
                           "src/core/quality.ts": TS_QUALITY.replace("MODEL_Q", "gpt-4.1"),
                           "src/app/looped.ts": TS_ROUND})
    result = lint_tree(tmp_path, {"EL301", "EL502"})
    assert not [e for e in (*result.tool_errors, *result.warnings) if "time budget" in e]
    first = _at(sorted(result.findings, key=lambda f: (f.path, f.line, f.code)))
    assert ("EL301", "src/core/quality.ts", 5) in first
    assert _at(_found(tmp_path, {"EL301", "EL502"})) == first


# A relevant module imports two files with no LLM word: the loop helper that chains the steps
# it is handed is read; the plain utility is not (the prefilter's saving stays).
UTIL = """\
def clamp(value, low, high):
    return max(low, min(high, value))
"""


def test_only_the_skipped_file_that_chains_its_steps_is_read(tmp_path: Path) -> None:
    files = {"kit/cycle.py": PY_LOOP.replace("evaluate", "check"),
             "kit/mathx.py": UTIL,
             "app.py": PY_APP.replace("from kit.cycle import polish",
                                      "from kit.cycle import polish\nfrom kit.mathx import clamp")}
    write_files(tmp_path, {"kit/__init__.py": "", **files})
    facts = [build_facts(SourceFile(tmp_path / rel, rel, text, text.encode()), force=False)
             for rel, text in files.items()]
    assert [f.analyzed for f in facts] == [False, False, True]  # the words of the prefilter
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        read = _step_runners(facts, Tables(facts), None)
    finally:
        os.chdir(old)
    assert sorted(read) == ["kit/cycle.py"] and read["kit/cycle.py"].runs_steps
    assert ("EL502", "kit/cycle.py", 8) in _at(_found(tmp_path, {"EL502"}))


# A writer picked from a table of functions by a key known only at run time: each function of
# the table may run there (one of them on the judge's model).
PY_TABLE = """\
from anthropic import Anthropic

claude = Anthropic()


def terse(topic):
    m = claude.messages.create(model="claude-haiku-4-5", max_tokens=300,
                               messages=[{"role": "user", "content": f"Two lines on {topic}"}])
    return m.content[0].text


def verbose(topic):
    m = claude.messages.create(model="claude-sonnet-4-5", max_tokens=900,
                               messages=[{"role": "user", "content": f"A page on {topic}"}])
    return m.content[0].text


STYLES = {"terse": terse, "verbose": verbose}


def mark(text):
    m = claude.messages.create(model="JUDGE", max_tokens=50, messages=[
        {"role": "user",
         "content": f"Rate this answer from 1 to 10, number only:\\n<a>{text}</a>"}])
    return int(m.content[0].text)


def session(style, topic):
    return mark(STYLES[style](topic))
"""


def test_a_writer_picked_from_a_table_of_functions(tmp_path: Path) -> None:
    write_files(tmp_path, {"table.py": PY_TABLE.replace("JUDGE", "claude-sonnet-4-5")})
    same = [f for f in _found(tmp_path, {"EL301"}) if f.code == "EL301"]
    assert [(f.line, f.severity.value) for f in same] == [(22, "error")]
    assert "table.py:29" in same[0].message  # the table call: its writer on the judge's model
    write_files(tmp_path, {"table.py": PY_TABLE.replace("JUDGE", "gpt-4o")})
    assert _found(tmp_path, {"EL301"}) == []


# A helper named for evaluation that scores a handed function in code (precision of what it
# retrieves): the handed function is what is evaluated, not a judge, whatever the helper's name.
PY_METRIC = """\
from anthropic import Anthropic

claude = Anthropic()


def rerank(query, docs):
    m = claude.messages.create(model="claude-haiku-4-5", max_tokens=100, messages=[
        {"role": "user", "content": f"Order these for {query}: {docs}"}])
    return m.content[0].text.split()


def answer(query, docs):
    m = claude.messages.create(model="claude-haiku-4-5", max_tokens=400, messages=[
        {"role": "user", "content": f"Answer {query} from {docs}"}])
    return m.content[0].text


def evaluate_retrieval(retrieve, cases):
    hits = 0
    for case in cases:
        got = retrieve(case["query"], case["docs"])
        hits += int(case["gold"] in got[:3])
    return hits / len(cases)


def main(cases):
    print(evaluate_retrieval(rerank, cases), [answer(c["query"], c["docs"]) for c in cases])
"""


def test_a_handed_function_takes_no_role_from_the_helpers_name(tmp_path: Path) -> None:
    write_files(tmp_path, {"rag_eval.py": PY_METRIC})
    assert _found(tmp_path, {"EL301", "EL302"}) == []
