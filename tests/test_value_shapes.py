"""Shapes met on public TypeScript and Python evaluation code: a scorer that calls its own
helpers (a two-step judge), a pass flag a helper of an unread module computes, two fields of
one options object, a persona's name beside its system prompt, a planner agent that analyses
a plan, a Gemini client made by a project helper, the task's output handed to a scorer
(each with a variant that must keep or get its finding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lint_tree, write_files


def _found(tmp_path: Path, codes: set[str]) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.path, f.line) for f in lint_tree(tmp_path, codes).findings)


TWO_STEP_SCORER = """\
import { evalite, createScorer } from "evalite";
import { generateObject, generateText } from "ai";
import { google } from "@ai-sdk/google";
import { z } from "zod";

const checker = google("gemini-2.0-flash");

async function claimsOf(text: string) {
  const { object } = await generateObject({ model: checker,
    schema: z.object({ claims: z.array(z.string()) }),
    prompt: `List the claims this text makes:\\n${text}` });
  return object.claims;
}

async function supported(claims: string[], source: string) {
  const { object } = await generateObject({ model: checker,
    system: "You are a strict fact checker.",
    schema: z.object({ ok: z.array(z.boolean()) }),
    prompt: `Source:\\n${source}\\nClaims:\\n${claims.join("\\n")}` });
  return object.ok.filter(Boolean).length / Math.max(1, object.ok.length);
}

const grounded = createScorer<string, string>({
  name: "Grounded",
  scorer: async ({ input, output }) => supported(await claimsOf(output), input),
});

evalite("Digest", {
  data: async () => [{ input: "The museum opens at 9." }],
  task: async (source) => (await generateText({ model: google("TASK_MODEL"),
                                               prompt: `Summarise: ${source}` })).text,
  scorers: [grounded],
});
"""


def test_a_scorers_own_two_step_helpers_are_the_scorer(tmp_path: Path) -> None:
    """Listing the claims, then checking them, on one model: two steps of the scorer, not a
    generator and its judge; the task on another model leaves nothing to report."""
    write_files(tmp_path, {"evals/digest.eval.ts": TWO_STEP_SCORER.replace(
        "TASK_MODEL", "gemini-2.5-pro")})
    assert _found(tmp_path, {"EL202", "EL301"}) == []


def test_a_scorer_step_on_the_tasks_model_is_reported(tmp_path: Path) -> None:
    write_files(tmp_path, {"evals/digest.eval.ts": TWO_STEP_SCORER.replace(
        "TASK_MODEL", "gemini-2.0-flash")})
    found = _found(tmp_path, {"EL301"})
    assert found and {path for _, path, _ in found} == {"evals/digest.eval.ts"}


SUMMARY_HELPER = """\
export function verdictOf(rating: { score: number; flags: string[] }) {
  return { ok: rating.flags.length === 0 && rating.score >= 4, score: rating.score };
}
"""

JUDGE_AND_GATE = """\
import OpenAI from "openai";
import { verdictOf } from "./report/verdict";

const ai = new OpenAI();

export async function essayLoop(topic: string) {
  let essay = "";
  for (let round = 0; round < 4; round++) {
    const w = await ai.chat.completions.create({ model: "gpt-4.1",
      messages: [{ role: "user", content: `Write an essay on ${topic}. Last try:\\n${essay}` }] });
    essay = w.choices[0].message.content ?? "";
    const r = await ai.chat.completions.create({ model: "gpt-4.1-mini",
      messages: [{ role: "system", content: "You are a strict grader. Score the essay from 1 " +
                   "to 10; return JSON {\"score\": n, \"flags\": [], \"passed\": true}." },
                 { role: "user", content: `<essay>${essay}</essay>` }] });
    const rating = JSON.parse(r.choices[0].message.content ?? "{}");
    if (READ.ok) break;
  }
  return essay;
}
"""


def test_a_pass_flag_computed_by_a_helper_of_an_unread_module_is_not_the_judges(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/report/verdict.ts": SUMMARY_HELPER,
                           "src/gate.ts": JUDGE_AND_GATE.replace("READ", "verdictOf(rating)")})
    assert _found(tmp_path, {"EL503"}) == []


def test_the_judges_own_pass_field_is_still_reported(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/report/verdict.ts": SUMMARY_HELPER,
                           "src/gate.ts": JUDGE_AND_GATE.replace("READ.ok", "rating.passed")})
    assert _found(tmp_path, {"EL503"}) == [("EL503", "src/gate.ts", 17)]


TWO_FIELDS = """\
from openai import OpenAI

llm = OpenAI()


def duel(settings, question):
    a = llm.chat.completions.create(model=settings.WRITER,
                                    messages=[{"role": "user", "content": question}])
    v = llm.chat.completions.create(
        model=settings.JUDGE,
        messages=[{"role": "system", "content": "You are a strict judge. Score 1-10."},
                  {"role": "user", "content": a.choices[0].message.content}])
    return v.choices[0].message.content
"""


@pytest.mark.parametrize(("judge_field", "flagged"), [("grader_model", False),
                                                      ("writer_model", True)])
def test_two_fields_of_one_settings_parameter_are_two_models(tmp_path: Path, judge_field: str,
                                                             flagged: bool) -> None:
    text = TWO_FIELDS.replace("settings.WRITER", "settings.writer_model").replace(
        "settings.JUDGE", f"settings.{judge_field}")
    write_files(tmp_path, {"duel.py": text})
    assert bool(_found(tmp_path, {"EL301"})) is flagged


PERSONA = """\
import { generateText } from "ai";
import { openai } from "@ai-sdk/openai";
import { rateJoke } from "./rate";

async function perform(comic: { name: string; style: string }) {
  const system = `You are ${comic.name}, a comedian. Your style: ${comic.style}`;
  const { text } = await generateText({ model: openai("gpt-4.1"), system, prompt: "One joke." });
  return text;
}

export async function show(comic: { name: string; style: string }) {
  const joke = await perform(comic);
  return rateJoke(joke, FIELD);
}
"""

RATE = """\
import { generateText } from "ai";
import { anthropic } from "@ai-sdk/anthropic";

export async function rateJoke(joke: string, who: string) {
  const { text } = await generateText({ model: anthropic("claude-haiku-4-5"),
    system: "You are a comedy judge. Score the joke from 1 to 10.",
    prompt: `Comedian: ${who}\\n<joke>${joke}</joke>` });
  return text;
}
"""


@pytest.mark.parametrize(("field", "flagged"), [("comic.name", False), ("comic.style", True),
                                                ("comic", True)])
def test_a_personas_name_is_no_part_of_its_system_prompt(tmp_path: Path, field: str,
                                                         flagged: bool) -> None:
    write_files(tmp_path, {"src/show.ts": PERSONA.replace("FIELD", field), "src/rate.ts": RATE})
    assert bool(_found(tmp_path, {"EL202"})) is flagged


AGENT = """\
---
name: NAME
description: DESC
tools: Read, Grep, Bash
model: inherit
---

Follow the description.
"""


@pytest.mark.parametrize(("desc", "flagged"), [
    ("Dispatcher that analyzes the task list and produces a schedule of which agent runs what. "
     "Use after the planner has created the tasks.", False),
    ("Reviewer that checks the code just written for bugs and gives a verdict. "
     "Use after the implementer has finished a change.", True),
])
def test_an_agent_whose_product_is_a_plan_is_no_reviewer(tmp_path: Path, desc: str,
                                                         flagged: bool) -> None:
    write_files(tmp_path, {".claude/agents/helper.md": AGENT.replace("NAME", "helper").replace(
        "DESC", desc)})
    assert bool(_found(tmp_path, {"EL304", "EL401"})) is flagged


GENAI_HELPER = """\
import { GoogleGenAI } from "@google/genai";

export function client() {
  return new GoogleGenAI({ apiKey: process.env.GEMINI_KEY });
}
"""

GENAI_JUDGE = """\
import { client } from "../lib/genai";

export async function answer(q: string) {
  const r = await client().models.generateContent({ model: "gemini-2.5-flash", contents: q });
  return r.text ?? "";
}

export async function grade(q: string) {
  const a = await answer(q);
  const v = await client().models.generateContent({ model: "JUDGE",
    contents: `You are a strict judge. Score the answer from 1 to 10.\\n<a>${a}</a>` });
  return v.text;
}
"""


@pytest.mark.parametrize(("judge", "flagged"), [("gemini-2.5-flash", True),
                                                ("gemini-2.5-pro", False)])
def test_a_gemini_client_made_by_a_project_helper_runs_models(tmp_path: Path, judge: str,
                                                              flagged: bool) -> None:
    write_files(tmp_path, {"src/lib/genai.ts": GENAI_HELPER,
                           "src/qa/grade.ts": GENAI_JUDGE.replace("JUDGE", judge)})
    assert _found(tmp_path, {"EL301"}) == ([("EL301", "src/qa/grade.ts", 10)] if flagged else [])


HARNESS_FLOW = """\
from langsmith import evaluate
import anthropic

api = anthropic.Anthropic()


def concierge(inputs):
    m = api.messages.create(model="claude-sonnet-4-5", max_tokens=400,
                            system="You are the hotel's concierge.",
                            messages=[{"role": "user", "content": inputs["ask"]}])
    return {"reply": m.content[0].text}


def courteous(run, example):
    m = api.messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=[
        {"role": "user",
         "content": f"Reply 1 if courteous, else 0: <r>{run.outputs['reply']}</r>"}])
    return {"key": "courteous", "score": int(m.content[0].text.strip() == "1")}


evaluate(concierge, data="hotel-asks", evaluators=[courteous])
"""


def test_the_harness_hands_the_tasks_output_to_the_scorer(tmp_path: Path) -> None:
    """The scorer reads ``run.outputs``: the task's reply reaches it through the harness, so
    the finding names the task's call as the generator."""
    write_files(tmp_path, {"evals/hotel.py": HARNESS_FLOW})
    result = lint_tree(tmp_path, {"EL301"})
    assert [(f.code, f.line) for f in result.findings] == [("EL301", 15)]
    assert [r.line for r in result.findings[0].related] == [8]


PARSE_HELPER_PY = """\
import json
import re

from openai import OpenAI

oa = OpenAI()


def first_object(text):
    found = re.search(r"\\{.*\\}", text, re.S)
    BODY


def referee(essay):
    r = oa.chat.completions.create(model="gpt-4.1-mini", messages=[
        {"role": "system", "content": "You are a judge. Reply with JSON {\\"score\\": 1-10}."},
        {"role": "user", "content": essay}])
    return first_object(r.choices[0].message.content)
"""


@pytest.mark.parametrize(("body", "flagged"), [
    ("return json.loads(found.group(0))", True),
    ("try:\n        return json.loads(found.group(0))\n    except ValueError:\n        return None",
     False),
])
def test_a_judges_text_parsed_by_a_helper_is_parsed_unchecked(tmp_path: Path, body: str,
                                                              flagged: bool) -> None:
    write_files(tmp_path, {"ref.py": PARSE_HELPER_PY.replace("BODY", body)})
    assert _found(tmp_path, {"EL504"}) == ([("EL504", "ref.py", 18)] if flagged else [])


PARSE_HELPER_JS = """\
const OpenAI = require("openai");
const oa = new OpenAI();

function toJson(raw) {
  return JSON.parse(raw.slice(raw.indexOf("{")));
}

async function referee(essay) {
  const r = await oa.chat.completions.create({ model: "gpt-4.1-mini", messages: [
    { role: "system", content: "You are a judge. Reply with JSON {score: 1-10}." },
    { role: "user", content: essay }] });
  CALL
}

module.exports = { referee };
"""


@pytest.mark.parametrize(("call", "flagged"), [
    ("return toJson(r.choices[0].message.content);", True),
    ("try { return toJson(r.choices[0].message.content); } catch (e) { return null; }", False),
])
def test_a_scripts_parse_helper_is_followed_too(tmp_path: Path, call: str,
                                                flagged: bool) -> None:
    write_files(tmp_path, {"lib/referee.js": PARSE_HELPER_JS.replace("CALL", call)})
    assert _found(tmp_path, {"EL504"}) == ([("EL504", "lib/referee.js", 12)] if flagged else [])


AGENT_SETTINGS = """\
export const criticSettings = {
  name: "critic",
  model: "MODEL",
  instructions: "You are a strict judge of travel plans. Reply PASS or a list of fixes.",
};
"""

AGENT_LOOP = """\
import { Agent, run } from "@openai/agents";
import { criticSettings } from "./settings";

const planner = new Agent({ name: "planner", model: "gpt-4.1",
  instructions: "Plan a weekend trip." });
const critic = new Agent(criticSettings);

export async function plan(city: string) {
  let ask = `A weekend in ${city}`;
  let draft = "";
  for (let i = 0; i < 3; i++) {
    draft = (await run(planner, ask)).finalOutput ?? "";
    const verdict = (await run(critic, `<plan>${draft}</plan>`)).finalOutput ?? "";
    if (verdict.includes("PASS")) break;
    ask = `${ask}\\nFix: ${verdict}`;
  }
  return draft;
}
"""


@pytest.mark.parametrize(("model", "flagged"), [("gpt-4.1", True), ("gpt-4.1-mini", False)])
def test_an_agents_settings_object_in_another_module_gives_its_model(
        tmp_path: Path, model: str, flagged: bool) -> None:
    write_files(tmp_path, {"src/agents/settings.ts": AGENT_SETTINGS.replace("MODEL", model),
                           "src/agents/trip.ts": AGENT_LOOP})
    assert _found(tmp_path, {"EL301"}) == ([("EL301", "src/agents/trip.ts", 13)] if flagged
                                           else [])


CHAT_LOOP = """\
from openai import OpenAI

c = OpenAI()


def assistant(q):
    a = c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": q}])
    v = c.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": "You are a strict judge. Score the answer from 1 to 10."},
        {"role": "user", "content": a.choices[0].message.content}])
    return v.choices[0].message.content


def main():
    while True:
        typed = input("> ")
        if TEST:
            break
        print(assistant(typed))
"""


@pytest.mark.parametrize("test", ['typed.strip().lower() == "quit"', 'typed == "quit"'])
def test_a_loop_the_user_ends_through_a_method_of_what_was_typed_is_a_conversation(
        tmp_path: Path, test: str) -> None:
    write_files(tmp_path, {"chat.py": CHAT_LOOP.replace("TEST", test)})
    assert _found(tmp_path, {"EL501"}) == []


def test_a_helper_that_coerces_a_matched_number_parses_nothing_of_its_callers(
        tmp_path: Path) -> None:
    """``float(m.group(1))`` of a digit a regex matched, with a fallback, checks its input;
    only a JSON or literal parse of a parameter is handed on (see the test above)."""
    body = ('found = re.search(r"(\\d+)", text)\n    return float(found.group(1)) if found '
            'else float("nan")')
    write_files(tmp_path, {"ref.py": PARSE_HELPER_PY.replace(
        '    found = re.search(r"\\{.*\\}", text, re.S)\n    BODY', "    " + body)})
    assert "float(found.group(1))" in (tmp_path / "ref.py").read_text()
    assert _found(tmp_path, {"EL504"}) == []


# A wrapper that reports whether the call went through (``{ok: true, value}`` from its try,
# ``{ok: false}`` from its catch): the caller's test of ``ok`` is error handling, not a verdict.
GUARDED_REVIEW = """\
import OpenAI from "openai";

const oai = new OpenAI();

async function draftBlurb(product: string) {
  const r = await oai.chat.completions.create({ model: "gpt-4.1",
    messages: [{ role: "user", content: `Write a blurb for ${product}` }] });
  return r.choices[0].message.content ?? "";
}

async function reviewBlurb(blurb: string) {
  try {
    const ask = `Rate this blurb from 1 to 10. JSON {"rating": n, "ok": bool}\\n${blurb}`;
    const r = await oai.chat.completions.create({ model: "gpt-4.1-mini",
      messages: [{ role: "user", content: ask }] });
    const parsed = JSON.parse(r.choices[0].message.content ?? "{}");
    return { ok: true, value: parsed };
  } catch (err) {
    return { ok: false, value: null };
  }
}

export async function blurbLoop(product: string) {
  let blurb = await draftBlurb(product);
  for (let i = 0; i < 3; i++) {
    const res = await reviewBlurb(blurb);
    if (!res.ok) continue;
    console.log(res.value.rating);
    if (res.value.ok) break;
    blurb = await draftBlurb(product);
  }
  return blurb;
}
"""


def test_a_wrappers_constant_ok_flag_is_no_verdict(tmp_path: Path) -> None:
    write_files(tmp_path, {"web/blurb.ts": GUARDED_REVIEW})
    # the judge's own `ok` (inside the value) stops the loop; the wrapper's `ok` does not
    assert _found(tmp_path, {"EL503"}) == [("EL503", "web/blurb.ts", 29)]


# A shared wrapper whose model comes from an options object with a default
# (``const { model = "…" } = opts``): the caller that names a model runs on it.
OPTIONS_WRAPPER = {
    "lib/gemini.ts": """\
import { GoogleGenerativeAI } from "@google/generative-ai";

export async function runGemini(text: string, settings: { model?: string; system?: string } = {}) {
  const { model = "gemini-2.5-pro", system } = settings;
  const m = new GoogleGenerativeAI("key").getGenerativeModel({ model, systemInstruction: system });
  const out = await m.generateContent(text);
  return out.response.text();
}
""",
    "lib/flow.ts": """\
import { runGemini } from "./gemini";

export async function compose(topic: string) {
  return runGemini(`Compose a short essay on ${topic}`, { system: "You are an essay writer." });
}

export async function appraise(essay: string) {
  return runGemini(`Grade this essay from 1 to 10:\\n<essay>${essay}</essay>`, JUDGE_OPTS);
}

export async function pipeline(topic: string) {
  return appraise(await compose(topic));
}
""",
}


@pytest.mark.parametrize(("judge_opts", "flagged"), [
    ('{ system: "You are a strict grader." }', True),  # the default: the writer's model
    ('{ system: "You are a strict grader.", model: "gemini-2.0-flash-lite" }', False),
])
def test_a_model_from_an_options_object_with_a_default(tmp_path: Path, judge_opts: str,
                                                       flagged: bool) -> None:
    write_files(tmp_path, {p: t.replace("JUDGE_OPTS", judge_opts)
                           for p, t in OPTIONS_WRAPPER.items()})
    found = [f for f in _found(tmp_path, {"EL301"}) if f[1] == "lib/flow.ts"]
    assert bool(found) is flagged


def test_another_field_of_a_record_holding_a_pass_flag_is_not_the_flag(tmp_path: Path) -> None:
    write_files(tmp_path, {"qa/panel.py": """\
import json

from anthropic import Anthropic

llm = Anthropic()


def draft(brief, hint=""):
    r = llm.messages.create(model="claude-sonnet-4-5", max_tokens=500,
                            messages=[{"role": "user", "content": f"Write copy: {brief} {hint}"}])
    return r.content[0].text


def panel(copy):
    r = llm.messages.create(model="claude-haiku-4-5", max_tokens=200, messages=[
        {"role": "user", "content": "Score this copy 1-10 as JSON {score, accepted}: " + copy}])
    legal = json.loads(r.content[0].text)
    return {"legal": legal, "accepted": legal.get("accepted", False)}


def run(brief):
    copy = draft(brief)
    for _ in range(4):
        verdict = panel(copy)
        if verdict["legal"]:
            print(verdict["legal"]["score"])
        if verdict["accepted"]:
            break
        copy = draft(brief, "again")
    return copy
"""})
    assert [line for code, _, line in _found(tmp_path, {"EL503"})] == [27]


# A LangGraph.js graph whose nodes take their chat model from a factory of another module
# (``getLlm()``): the node files name no SDK, and are read because they import the factory.
FACTORY_GRAPH = {
    "app/llm/factory.ts": """\
import { ChatAnthropic } from "@langchain/anthropic";

export const getLlm = () => {
  return new ChatAnthropic({ model: "claude-sonnet-4-5" });
};
""",
    "app/steps/draft.ts": """\
import { getLlm } from "../llm/factory";

export async function draftStep(state: { messages: any[] }) {
  const { messages } = state;
  const reply = await getLlm().invoke(messages);
  return { messages: [reply] };
}
""",
    "app/steps/review.ts": """\
import { getLlm } from "../llm/factory";

export async function reviewStep(state: { messages: any[]; verdict?: { score: number } }) {
  const last = state.messages[state.messages.length - 1];
  const judge = getLlm().withStructuredOutput(Verdict);
  const ask = `Rate this answer from 1 to 5: <answer>${last.content}</answer>`;
  const verdict = await judge.invoke(ask);
  return { verdict };
}
""",
    "app/flow.ts": """\
import { StateGraph, END } from "@langchain/langgraph";
import { draftStep } from "./steps/draft";
import { reviewStep } from "./steps/review";

export const app = new StateGraph(State)
  .addNode("draft", draftStep)
  .addNode("review", reviewStep)
  .addEdge("__start__", "draft")
  .addEdge("draft", "review")
  .addConditionalEdges("review", (s) => (s.verdict.score > 4 ? END : "draft"))
  .compile();
""",
}


def test_nodes_that_take_their_model_from_a_factory_of_another_module(tmp_path: Path) -> None:
    write_files(tmp_path, FACTORY_GRAPH)
    codes = {(code, path) for code, path, _ in _found(tmp_path, {"EL301", "EL501"})}
    assert codes == {("EL301", "app/steps/review.ts"), ("EL501", "app/flow.ts")}


# Round U (half a): a pass flag a helper computes into a local and returns by shorthand; a
# document named after its subject; a generator asked about chain of thought, not to use it.
LOCAL_PASS = """\
import OpenAI from "openai";

const ai = new OpenAI();

async function rewrite(brief: string, hints: string[] = []) {
  const r = await ai.chat.completions.create({ model: "gpt-4.1",
    messages: [{ role: "user", content: `Write a synopsis: ${brief} ${hints.join("; ")}` }] });
  return r.choices[0].message.content ?? "";
}

async function appraise(synopsis: string) {
  const ask = `Rate this synopsis 1-5 as JSON {"rating": n}:\\n${synopsis}`;
  const r = await ai.chat.completions.create({ model: "gpt-4.1-mini",
    messages: [{ role: "user", content: ask }] });
  const graded = JSON.parse(r.choices[0].message.content ?? "{}");
  const passes = graded.rating >= 4;
  return { ...graded, passes };
}

export async function synopsisLoop(brief: string) {
  let text = await rewrite(brief);
  for (let k = 0; k < 3; k++) {
    const ev = await appraise(text);
    if (ev.passes) break;
    text = await rewrite(brief, ["tighter"]);
  }
  return text;
}
"""


def test_a_pass_flag_set_from_a_comparison_in_a_local_is_computed(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/synopsis.ts": LOCAL_PASS})
    assert _found(tmp_path, {"EL503"}) == []


@pytest.mark.parametrize(("name", "flagged"), [("reasoning_trace", True),
                                               ("chain_of_thought_paper", False)])
def test_a_document_named_after_its_subject_is_not_a_trace(tmp_path: Path, name: str,
                                                           flagged: bool) -> None:
    write_files(tmp_path, {"quiz/grade.py": f"""\
from openai import OpenAI

client = OpenAI()


def grade_answer(question: str, answer: str) -> str:
    {name} = open("reference.txt").read()
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[
        {{"role": "system", "content": "You are a grader. Score the answer from 1 to 10."}},
        {{"role": "user", "content": f"Q: {{question}}\\nA: <a>{{answer}}</a>\\nRef: {{{name}}}"}}])
    return r.choices[0].message.content
"""})
    assert bool(_found(tmp_path, {"EL202"})) is flagged


@pytest.mark.parametrize(("ask", "flagged"), [
    ("Think step by step, then answer: {q}", True),
    ("Write three quiz questions about the chain of thought prompting paper: {q}", False),
])
def test_a_topic_named_chain_of_thought_is_no_reasoning_request(tmp_path: Path, ask: str,
                                                                flagged: bool) -> None:
    write_files(tmp_path, {"quiz/flow.py": f"""\
from openai import OpenAI

client = OpenAI()


def make(q: str) -> str:
    r = client.chat.completions.create(model="gpt-4o", messages=[
        {{"role": "user", "content": f"{ask}"}}])
    return r.choices[0].message.content


def judge(q: str) -> str:
    out = make(q)
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[
        {{"role": "system", "content": "You are a grader. Score the answer from 1 to 10."}},
        {{"role": "user", "content": f"Q: {{q}}\\nA: <a>{{out}}</a>"}}])
    return r.choices[0].message.content
"""})
    assert bool(_found(tmp_path, {"EL201"})) is flagged
