"""How strong a finding's evidence is decides its severity: a judge known by a name only, a
pair of calls linked only by where they are written, a context value reported for its name:
warnings that say why. A flow, a harness or a judge's own text makes the same finding an
error. Also: serialising a value (``json.dumps``, ``JSON.stringify``) keeps what it holds, so
the run a harness hands a scorer reaches a judge prompt built from its JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lint_tree, write_files


def _found(tmp_path: Path, codes: set[str]) -> list[tuple[str, str, int, str]]:
    result = lint_tree(tmp_path, codes)
    return sorted((f.code, f.path, f.line, f.severity.value) for f in result.findings)


# A release bot: the writer and the rater share a model, and a caller may or may not hand the
# rater the writer's text.
RELEASE_BOT = """\
import anthropic

bot = anthropic.Anthropic()
PRIMARY = "claude-sonnet-4-5"


def write_changelog(diffs: list[str]) -> str:
    ask = "Describe: " + "; ".join(diffs)
    out = bot.messages.create(model=PRIMARY, max_tokens=900,
                              messages=[{"role": "user", "content": ask}])
    return out.content[0].text


def rate(text: str) -> str:
    out = bot.messages.create(model=PRIMARY, max_tokens=20,
                              system="Score this changelog from 1 to 10 for clarity.",
                              messages=[{"role": "user", "content": text}])
    return out.content[0].text
"""


@pytest.mark.parametrize(("tail", "severity"), [
    ("", "warning"),  # nothing links them: two tools of one file
    ("\n\ndef publish(diffs):\n    return rate(write_changelog(diffs))\n", "error"),
])
def test_a_pair_linked_by_place_only_is_a_warning(tmp_path: Path, tail: str,
                                                  severity: str) -> None:
    write_files(tmp_path, {"tools/release.py": RELEASE_BOT + tail})
    assert _found(tmp_path, {"EL301"}) == [("EL301", "tools/release.py", 15, severity)]


# A TS loop whose critic the code reads a pass flag from: named a critic only, or told to grade.
CRITIC_LOOP = """\
import OpenAI from "openai";

const client = new OpenAI();

async function draftPitch(idea: string, fixes = ""): Promise<string> {
  const r = await client.chat.completions.create({
    model: "gpt-4.1",
    messages: [{ role: "user", content: `Pitch: ${idea}\\n${fixes}` }],
  });
  return r.choices[0].message.content ?? "";
}

async function criticPass(pitch: string) {
  const r = await client.chat.completions.create({
    model: "gpt-4.1-mini",
    messages: [{
      role: "user",
      content: `ASK\\n${pitch}\\nJSON: {"score": 0, "accepted": false, "fixes": ""}`,
    }],
  });
  return JSON.parse(r.choices[0].message.content ?? "{}");
}

export async function pitchLoop(idea: string) {
  let pitch = await draftPitch(idea);
  for (let round = 0; round < 5; round++) {
    const v = await criticPass(pitch);
    console.log(v.score);
    if (v.accepted) break;
    pitch = await draftPitch(idea, v.fixes);
  }
  return pitch;
}
"""


@pytest.mark.parametrize(("ask", "severity"), [
    ("Here is a pitch.", "warning"),  # only the function's name says it judges
    ("Rate this pitch from 1 to 10 for clarity.", "error"),  # its own text says so
])
def test_a_pass_flag_of_a_judge_known_by_name_only_is_a_warning(tmp_path: Path, ask: str,
                                                                severity: str) -> None:
    write_files(tmp_path, {"src/pitch.ts": CRITIC_LOOP.replace("ASK", ask)})
    assert _found(tmp_path, {"EL503"}) == [("EL503", "src/pitch.ts", 29, severity)]


def test_a_context_name_with_no_traced_flow_is_a_warning(tmp_path: Path) -> None:
    write_files(tmp_path, {"judge/rate.py": """\
from openai import OpenAI

oai = OpenAI()


def rate(case: dict) -> str:
    r = oai.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": "You are a grader. Score the reply from 1 to 5."},
                  {"role": "user",
                   "content": f"{case['question']}\\n{case['reply']}\\n{case['tool_trace']}"}])
    return r.choices[0].message.content
"""})
    found = _found(tmp_path, {"EL202"})
    assert found and all(s == "warning" for *_, s in found)


# A LangSmith harness whose judge is a closure a factory makes; the judge's prompt holds the
# run's outputs as JSON (JSON.stringify), so the task's output reaches it.
HARNESS = {
    "evals/steps.ts": """\
import { GoogleGenAI } from "@google/genai";

export async function condense(ticket: string, ai: GoogleGenAI, modelId: string) {
  const res = await ai.models.generateContent({
    model: modelId,
    contents: [{ role: "user", parts: [{ text: `Condense this ticket:\\n${ticket}` }] }],
  });
  return res.text ?? "";
}
""",
    "evals/subject.ts": """\
import { GoogleGenAI } from "@google/genai";
import { condense } from "./steps";

const modelId = "gemini-2.5-flash";

export async function subject(inputs: { ticket: string }) {
  const ai = new GoogleGenAI({});
  return { short: await condense(inputs.ticket, ai, modelId) };
}
""",
    "evals/raters.ts": """\
import { GoogleGenAI } from "@google/genai";
import { Run, Example } from "langsmith";

const buildRater = (cfg: { rubric: string; model: string }) => {
  const ai = new GoogleGenAI({});
  return async (run: Run, example?: Example) => {
    const text = cfg.rubric.replace("{out}", JSON.stringify(run.outputs));
    const r = await ai.models.generateContent({
      model: cfg.model,
      contents: [{ role: "user", parts: [{ text }] }],
    });
    return { key: "kept", score: (r.text ?? "").includes("YES") ? 1 : 0 };
  };
};

export const keepsFacts = async (run: Run, example?: Example) => {
  const rater = buildRater({
    rubric: "Does this keep every fact? {out} Say YES or NO.",
    model: "JUDGE",
  });
  return await rater(run, example);
};
""",
    "evals/main.ts": """\
import { evaluate } from "langsmith/evaluation";
import { subject } from "./subject";
import { keepsFacts } from "./raters";

export async function main() {
  await evaluate(subject, { data: "tickets", evaluators: [keepsFacts] });
}
""",
}


@pytest.mark.parametrize(("judge", "expected"), [
    ("gemini-2.5-flash", [("EL301", "evals/raters.ts", 21, "error")]),
    ("gemini-2.5-pro", []),
])
def test_a_closure_judge_of_a_harness_is_linked_to_the_task(tmp_path: Path, judge: str,
                                                           expected: list[object]) -> None:
    write_files(tmp_path, {p: t.replace("JUDGE", judge) for p, t in HARNESS.items()})
    assert _found(tmp_path, {"EL301"}) == expected


def test_json_dumps_of_a_generator_trace_reaches_the_judge(tmp_path: Path) -> None:
    write_files(tmp_path, {"qa/check.py": """\
import json

from openai import OpenAI

api = OpenAI()


def solve(task: str) -> dict:
    r = api.chat.completions.create(model="gpt-4o", messages=[
        {"role": "system", "content": "You are a careful solver. Think step by step."},
        {"role": "user", "content": task}])
    return {"answer": r.choices[0].message.content, "steps": r.choices[0].message.content}


def verify(task: str) -> str:
    run = solve(task)
    r = api.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": "You are a grader. Score the answer from 1 to 10."},
        {"role": "user", "content": f"Task: {task}\\nRun: {json.dumps(run)}"}])
    return r.choices[0].message.content
"""})
    found = _found(tmp_path, {"EL201", "EL202"})
    assert [c for c, *_ in found] == ["EL201"]
