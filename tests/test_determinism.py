"""The same tree gives the same findings in every process. Python salts string hashes per
process, so a set of labels or a dict filled from one iterates in another order each time: a
finding must never depend on that order (issue 39's field runs showed an EL202 that came and
went between runs of one commit)."""

from __future__ import annotations

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
