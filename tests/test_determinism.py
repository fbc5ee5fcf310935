"""The same tree gives the same findings in every process. Python salts string hashes per
process, so a set of labels or a dict filled from one iterates in another order each time: a
finding must never depend on that order (issue 39's field runs showed an EL202 that came and
went between runs of one commit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_files

# A generator's system prompt built from several parameters, then most of them handed to the
# judge: which parameter was marked as the system prompt used to follow set order.
BOUT = """\
import { generateText } from "ai";
import { openai } from "@ai-sdk/openai";

type Comic = { name: string; style: string };

function stagePrompt(name: string, style: string, rival: string, theme: string) {
  return `You are ${name}, a comedian (${style}). You face ${rival}. Theme: ${theme}.`;
}

async function roast(me: Comic, rival: Comic, theme: string) {
  const system = stagePrompt(me.name, me.style, rival.name, theme);
  const { text } = await generateText({ model: openai("gpt-4.1"), system, prompt: "Your line." });
  return text;
}

async function mark(line: string, who: string, against: string, theme: string) {
  const { text } = await generateText({ model: openai("gpt-4.1-mini"),
    system: "You are a comedy judge. Score the roast from 1 to 10.",
    prompt: `${who} vs ${against} on ${theme}:\\n<roast>${line}</roast>` });
  return Number(text);
}

export async function bout(a: Comic, b: Comic, theme: string) {
  const line = await roast(a, b, theme);
  return mark(line, a.name, b.name, theme);
}
"""


# A model factory that returns one of two chat objects, wrapped (``withStructuredOutput``)
# where the judge runs it: which object the wrapper stands for used to follow set order.
EITHER = {
    "lib/llm.ts": """\
import { ChatOpenAI } from "@langchain/openai";
import { ChatOllama } from "@langchain/ollama";

export const pickModel = () => {
  if (process.env.OFFLINE === "1") {
    return new ChatOllama({ model: "qwen3" });
  }
  return new ChatOpenAI({ model: "gpt-4.1" });
};
""",
    "lib/nodes.ts": """\
import { pickModel } from "./llm";

export async function answer(q: string) {
  return (await pickModel().invoke(`Answer: ${q}`)).content;
}

export async function rate(q: string) {
  const a = await answer(q);
  const judge = pickModel().withStructuredOutput(Rating);
  return judge.invoke(`Rate this answer from 1 to 5: <a>${a}</a>`);
}
""",
}


# A JSON wrapper that retries by calling itself, two critics run by one helper, and a refine
# loop: which critic was paired with the generator by flow (and which call inside the wrapper
# was named as the generator) used to follow set order.
RETRY = {
    "src/model.ts": """\
import { GoogleGenerativeAI } from "@google/generative-ai";

const client = new GoogleGenerativeAI(process.env.GEMINI_KEY ?? "");

export async function ask(prompt: string, opts: { model?: string } = {}) {
  const { model = "gemini-2.5-flash" } = opts;
  const handle = client.getGenerativeModel({ model });
  const reply = await handle.generateContent(prompt);
  return reply.response.text();
}

export async function askJson<T>(prompt: string, opts: { model?: string } = {},
                                 attempt = 0): Promise<T> {
  const raw = await ask(`${prompt}\\nAnswer with one JSON object.`, opts);
  try {
    return JSON.parse(raw) as T;
  } catch (err) {
    if (attempt < 2) {
      return askJson<T>(prompt, opts, attempt + 1);
    }
    throw err;
  }
}
""",
    "src/review.ts": """\
import { askJson } from "./model";

type Review = { score: number; notes: string };

export async function safetyReview(draft: string) {
  return askJson<Review>(
    `You are a safety reviewer. Score the draft from 1 to 10 for harm.\\n<draft>${draft}</draft>`);
}

export async function styleReview(draft: string) {
  return askJson<Review>(
    `You are a style critic. Score the draft from 1 to 10 for clarity.\\n<draft>${draft}</draft>`);
}

export async function reviewAll(draft: string) {
  const [safety, style] = await Promise.all([safetyReview(draft), styleReview(draft)]);
  return { score: Math.min(safety.score, style.score), notes: safety.notes + style.notes };
}
""",
    "src/pipeline.ts": """\
import { askJson } from "./model";
import { reviewAll } from "./review";

type Draft = { body: string };

export async function compose(topic: string) {
  return askJson<Draft>(`Write a short article about ${topic}.`);
}

export async function improve(body: string, notes: string) {
  return askJson<Draft>(`Rewrite this article using the notes.\\n${body}\\nNotes: ${notes}`);
}

export async function produce(topic: string) {
  let draft = await compose(topic);
  for (let round = 0; round < 3; round++) {
    const verdict = await reviewAll(draft.body);
    if (verdict.score >= 8) break;
    draft = await improve(draft.body, verdict.notes);
  }
  return draft;
}
""",
}


def _outputs(tmp_path: Path) -> set[str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    outputs = set()
    for seed in ("1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-m", "evallint", "check", "--no-cache",
                               "--output-format", "json", "."], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode in (0, 1), proc.stderr
        outputs.add(proc.stdout)
    return outputs


def test_findings_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/bout.ts": BOUT})
    assert len(_outputs(tmp_path)) == 1


def test_the_object_a_wrapped_factory_model_stands_for_is_stable(tmp_path: Path) -> None:
    write_files(tmp_path, EITHER)
    outputs = _outputs(tmp_path)
    assert len(outputs) == 1 and "EL301" in outputs.pop()


def test_a_self_retrying_wrapper_pairs_every_critic_the_same_way(tmp_path: Path) -> None:
    write_files(tmp_path, RETRY)
    outputs = _outputs(tmp_path)
    assert len(outputs) == 1
    found = json.loads(outputs.pop())
    el301 = sorted((f["path"], f["line"], f["severity"]) for f in found if f["code"] == "EL301")
    # both critics read the draft the helper is handed: both pairs are by flow (errors), and
    # the generator named is the writer the loop calls, not the wrapper's retry inside it
    assert el301 == [("src/review.ts", 6, "error"), ("src/review.ts", 11, "error")]
    assert all("model.ts:18" not in f["message"] for f in found)
