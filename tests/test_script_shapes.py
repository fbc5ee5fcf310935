"""Shapes of TypeScript and Python evaluation code met on public repositories: objects made by
the project's own factories, model handles kept in another module or wrapped, models written
into a template string, barrels, nested workflows, loop exits on flags (each with a variant
that must stay clean)."""

from __future__ import annotations

from pathlib import Path

from evallint.frontends.script_front import build_script_facts
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files


def _codes(tmp_path: Path, codes: set[str]) -> list[tuple[str, str, int]]:
    result = lint_tree(tmp_path, codes)
    return sorted((f.code, f.path, f.line) for f in result.findings)


FACTORY_AGENTS = """\
import { Agent } from "@mastra/core/agent";

export function buildCritic() {
  const critic = new Agent({ name: "critic", instructions: "Give the tagline a mark out of 10.",
                             model: "openai/gpt-4o-mini" });
  return critic;
}
export function buildCopywriter() {
  return new Agent({ name: "copy", instructions: "Write one tagline.",
                    model: "openai/gpt-4o-mini" });
}
export async function askCritic(bot: Agent, tagline: string): Promise<string> {
  const out = await bot.generate(`Mark this tagline out of 10: <t>${tagline}</t>`);
  return out.text;
}
export async function askWriter(bot: Agent, product: string): Promise<string> {
  const out = await bot.generate(`Product: ${product}`);
  return out.text;
}
"""

FACTORY_PIPELINE = """\
import { Agent } from "@mastra/core/agent";
import { askCritic, askWriter, buildCopywriter, buildCritic } from "./bots";

export class Campaign {
  private readonly reviewer: Agent;
  private readonly author: Agent;
  constructor() {
    this.reviewer = buildCritic();
    this.author = buildCopywriter();
  }
  async once(product: string) {
    const line = await askWriter(this.author, product);
    return askCritic(this.reviewer, line);
  }
}
"""


def test_agents_made_by_a_factory_and_run_by_a_helper_keep_their_model(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/bots.ts": FACTORY_AGENTS, "src/campaign.ts": FACTORY_PIPELINE})
    assert ("EL301", "src/campaign.ts", 13) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"src/bots.ts": FACTORY_AGENTS.replace(
        '"openai/gpt-4o-mini" });\n  return critic', '"anthropic/claude-sonnet-4-5" });\n'
        '  return critic')})
    assert not _codes(tmp_path, {"EL301"})


def test_a_python_factory_at_module_level_keeps_its_agent(tmp_path: Path) -> None:
    code = (
        "from pydantic_ai import Agent\n\n"
        "def make_marker():\n"
        "    return Agent('openai:gpt-4.1', system_prompt='Score the essay from 0 to 20.')\n\n"
        "marker = make_marker()\n"
        "essayist = Agent('openai:gpt-4.1', system_prompt='Write an essay.')\n\n"
        "def mark(agent: Agent, essay: str) -> str:\n"
        "    return agent.run_sync(f'Score from 0 to 20: <essay>{essay}</essay>').output\n\n"
        "def compose(agent: Agent, title: str) -> str:\n"
        "    return agent.run_sync(f'Title: {title}').output\n\n"
        "def session(title: str) -> str:\n"
        "    essay = compose(essayist, title)\n"
        "    return mark(marker, essay)\n")
    write_files(tmp_path, {"school.py": code})
    assert ("EL301", "school.py", 17) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"school.py": code.replace("Agent('openai:gpt-4.1', system_prompt='Score",
                                                      "Agent('anthropic:claude-sonnet-4-5', "
                                                      "system_prompt='Mark")})
    assert not _codes(tmp_path, {"EL301"})


HANDLES = """\
import { createAnthropic } from "@ai-sdk/anthropic";
import { traced } from "./tracing";

const provider = createAnthropic();
export const solver = traced(provider("claude-sonnet-4-5"));
export const grader = traced(provider("claude-sonnet-4-5"));
"""

BENCH = """\
import { generateText } from "ai";
import { grader, solver } from "./handles";

export async function trial(question: string) {
  const attempt = await generateText({ model: solver, prompt: question });
  const verdict = await generateText({
    model: grader,
    prompt: `You are a grader. Score the answer from 0 to 100.\\n<answer>${attempt.text}</answer>`,
  });
  return verdict.text;
}
"""


def test_a_wrapped_handle_imported_from_another_module_keeps_its_model(tmp_path: Path) -> None:
    write_files(tmp_path, {"evals/handles.ts": HANDLES, "evals/bench.ts": BENCH,
                           "evals/tracing.ts": "export const traced = (m: any) => m;\n"})
    assert ("EL301", "evals/bench.ts", 6) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"evals/handles.ts": HANDLES.replace(
        'grader = traced(provider("claude-sonnet-4-5"))',
        'grader = traced(provider("claude-opus-4-1"))')})
    assert ("EL301", "evals/bench.ts", 6) not in _codes(tmp_path, {"EL301"})


SETTINGS = """\
const env = schema.parse({ LLM: process.env.LLM });
export const settings = { llmName: env.LLM ?? "gpt-4.1-mini" };
"""

ROOMS = """\
import { Agent } from "@mastra/core/agent";
import { settings } from "./settings";

const host = new Agent({ name: "host", instructions: "Describe the room.",
                         model: `openai/${settings.llmName}` });
const inspector = new Agent({ name: "inspector", instructions: "Rate the description from 1 to 5.",
                              model: `openai/${settings.llmName}` });

export async function tour(room: string) {
  const text = await host.generate(`Room: ${room}`);
  return inspector.generate(`Rate from 1 to 5: <d>${text.text}</d>`);
}
"""


def test_one_settings_field_in_a_template_string_is_one_model(tmp_path: Path) -> None:
    write_files(tmp_path, {"app/settings.ts": SETTINGS, "app/rooms.ts": ROOMS})
    assert ("EL301", "app/rooms.ts", 11) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"app/rooms.ts": ROOMS.replace(
        "model: `openai/${settings.llmName}` });\n\nexport",
        'model: "anthropic/claude-sonnet-4-5" });\n\nexport')})
    assert not _codes(tmp_path, {"EL301"})


STEPS = """\
import { createStep } from "@mastra/core/workflows";
import { Agent } from "@mastra/core/agent";
import { z } from "zod";

const chef = new Agent({ name: "chef", instructions: "Write a recipe.", model: "openai/gpt-4.1" });
const taster = new Agent({ name: "taster", model: "openai/o3",
  instructions: "You are a strict food critic. Score the recipe from 1 to 10, "
    + "then write READY or REDO." });
const shape = z.object({ dish: z.string(), recipe: z.string(), note: z.string(),
                        tries: z.number() });

export const cook = createStep({
  id: "cook", inputSchema: shape, outputSchema: shape,
  execute: async ({ inputData }) => {
    const r = await chef.generate(`Dish: ${inputData.dish}\\nNotes: ${inputData.note}`);
    return { ...inputData, recipe: r.text };
  },
});
export const taste = createStep({
  id: "taste", inputSchema: shape, outputSchema: shape,
  execute: async ({ inputData }) => {
    const v = await taster.generate(`<recipe>${inputData.recipe}</recipe>`);
    return { ...inputData, note: v.text };
  },
});
export const count = createStep({
  id: "count", inputSchema: shape, outputSchema: shape,
  execute: async ({ inputData }) => ({ ...inputData, tries: inputData.tries + 1 }),
});
"""

FLOW = """\
import { createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";
import { cook, count, taste } from "./steps";

const shape = z.object({ dish: z.string(), recipe: z.string(), note: z.string(),
                        tries: z.number() });
const round = createWorkflow({ id: "round", inputSchema: shape, outputSchema: shape })
  .then(cook)
  .then(taste)
  .then(count)
  .commit();

export const kitchen = createWorkflow({ id: "kitchen", inputSchema: shape, outputSchema: shape })
  .dountil(round, async ({ inputData }) => {
    const ready = inputData.note.startsWith("READY");
    const tired = inputData.tries >= 4;
    return ready || tired;
  })
  .commit();
"""


def test_a_nested_workflow_through_a_barrel_with_a_counted_exit(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/kitchen/steps/parts.ts": STEPS,
                           "src/kitchen/steps/index.ts":
                               'export { cook, taste, count } from "./parts";\n',
                           "src/kitchen/flow.ts": FLOW})
    got = _codes(tmp_path, {"EL501", "EL503"})
    # the taster's own word ends the loop (EL503); the counter flag bounds it (no EL501)
    assert [c for c, p, _ in got if p == "src/kitchen/flow.ts"] == ["EL503"]
    unbounded = FLOW.replace("return ready || tired;", "return ready;")
    write_files(tmp_path, {"src/kitchen/flow.ts": unbounded})
    assert "EL501" in [c for c, p, _ in _codes(tmp_path, {"EL501"})
                       if p == "src/kitchen/flow.ts"]


def test_a_barrel_is_analysed_and_other_files_without_llm_words_are_not() -> None:
    def facts(rel: str, text: str) -> object:
        return build_script_facts(SourceFile(Path(rel), rel, text, text.encode()), force=False)

    barrel = facts("src/a/index.ts", '// the steps\nexport { x, y as z } from "./x";\n'
                                     'export * from "./w";\n')
    other = facts("src/a/util.ts", 'export const pad = (s: string) => s.trim();\n')
    assert barrel.analyzed and "z" in barrel.imports  # type: ignore[attr-defined]
    assert not other.analyzed  # type: ignore[attr-defined]


PY_FLAGS = """\
from openai import OpenAI

client = OpenAI()


def draft(state):
    r = client.chat.completions.create(model="gpt-4.1",
                                       messages=[{"role": "user", "content": state["ask"]}])
    return {**state, "text": r.choices[0].message.content}


def review(state):
    ask = "Grade 1-10: " + state["text"]
    r = client.chat.completions.create(model="o3", messages=[{"role": "user", "content": ask}])
    return {**state, "grade": int(r.choices[0].message.content)}


def bump(state):
    return {**state, "rounds": state["rounds"] + 1}


def polish(state):
    while True:
        state = draft(state)
        state = review(state)
        state = bump(state)
        fine = state["grade"] >= 8
        spent = state["rounds"] >= 3
        if fine or spent:
            break
    return state
"""


def test_a_flag_set_from_a_counter_bounds_the_loop(tmp_path: Path) -> None:
    write_files(tmp_path, {"polish.py": PY_FLAGS})
    assert not _codes(tmp_path, {"EL501"})
    write_files(tmp_path, {"polish.py": PY_FLAGS.replace("if fine or spent:", "if fine:")})
    assert ("EL501", "polish.py", 23) in _codes(tmp_path, {"EL501"})


PASS_THROUGH = """\
import { Agent } from "@mastra/core/agent";
import { ghost } from "../missing/ghost";

const scout = new Agent({ name: "scout", instructions: "List sources.", model: "openai/gpt-4o" });
const planner = new Agent({ name: "planner", instructions: "Plan the next search.",
                            model: "openai/gpt-4o" });

async function search(topic: string, hint: string) {
  const r = await scout.generate(`Topic ${topic}. ${hint}`);
  return r.text;
}
async function assess(notes: string) {
  const r = await ghost.generate(`Assess: ${notes}`);
  return r.text;
}
export async function study(topic: string) {
  const plan = await planner.generate(`Plan research on ${topic}`);
  const a = await search(topic, plan.text);
  const b = await search(topic, plan.text);
  const result = await assess(a + b);
  return result.score;
}
"""


def test_a_score_read_off_several_outputs_names_no_judge(tmp_path: Path) -> None:
    """``assess`` runs an object nobody can resolve: its result holds both searches' outputs
    passed through, and reading ``.score`` off it says nothing of which one judged."""
    write_files(tmp_path, {"src/study.ts": PASS_THROUGH})
    assert not _codes(tmp_path, {"EL301"})


LOOP_HELPER = """\
import { Agent } from "@mastra/core/agent";

const maker = new Agent({ name: "maker", instructions: "Write a riddle.", model: "openai/gpt-4o" });
const checker = new Agent({ name: "checker", instructions: "Score the riddle from 1 to 10.",
                            model: "openai/gpt-4o" });

export class Riddler {
  async reflect(topic: string) {
    let riddle = "";
    for (let i = 0; i < 3; i++) {
      riddle = await this.write(topic, riddle);
      const mark = await this.check(riddle);
      if (mark > 7) break;
    }
    return riddle;
  }
  private async write(topic: string, last: string) {
    return (await maker.generate(`Riddle about ${topic}. Improve: ${last}`)).text;
  }
  private async check(riddle: string) {
    const s = await checker.generate(`Score 1-10: <r>${riddle}</r>`);
    return Math.min(10, Math.max(1, Number(s.text) || 1));
  }
}
"""

LOOP_CALLER = """\
import { Riddler } from "./riddler";

const riddler = new Riddler();

async function main() {
  const best = await riddler.reflect("rivers");
  console.log(best);
}

main();
"""


def test_a_method_that_writes_and_judges_is_not_an_evaluator_where_it_is_called(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/riddler.ts": LOOP_HELPER, "src/main.ts": LOOP_CALLER})
    got = _codes(tmp_path, {"EL301"})
    assert ("EL301", "src/riddler.ts", 21) in got
    assert not [g for g in got if g[1] == "src/main.ts"]  # (not its call, nor main()'s)


def test_a_script_finding_names_the_function_as_the_script_calls_it(tmp_path: Path) -> None:
    write_files(tmp_path, {"check.ts": (
        'import OpenAI from "openai";\n'
        "const ai = new OpenAI();\n"
        "export async function verdict(answer: string) {\n"
        '  const r = await ai.chat.completions.create({ model: "gpt-4.1", messages: [\n'
        '    { role: "user", content: `Score it 1-5 as JSON: <a>${answer}</a>` }] });\n'
        "  return JSON.parse(r.choices[0].message.content ?? \"\").score;\n"
        "}\n")})
    found = [f for f in lint_tree(tmp_path, {"EL504"}).findings]
    assert found and "`JSON.parse()`" in found[0].message and "json.loads" not in found[0].message


def test_grammar_gaps_typescript_accepts_are_mended_not_reported(tmp_path: Path) -> None:
    """A bare ``&`` in JSX text or an attribute, and a property named ``abstract``, are
    TypeScript the published grammars reject; a real syntax error is still a note."""
    write_files(tmp_path, {
        "app/page.tsx": ('import OpenAI from "openai";\n'
                         "export function Page() {\n"
                         '  return <a href="/?a=1&b=2">Home & Sign In</a>;\n'
                         "}\n"),
        "app/paper.ts": ('import OpenAI from "openai";\n'
                         "interface Paper {\n  title: string;\n  abstract?: string;\n}\n"
                         "export const both = (a: number, b: number) => a && b & 1;\n"),
        "app/broken.ts": 'import OpenAI from "openai";\nconst x = { a: 1 & };\n'})
    got = _codes(tmp_path, {"EL901"})
    assert got == [("EL901", "app/broken.ts", 2)]


OWN_CLIENT = """\
async function post(request: { model: string; input: string }) {
  const res = await fetch("https://api.openai.com/v1/responses", {
    method: "POST", body: JSON.stringify(request) });
  return res.json();
}
export async function answer(q: string) {
  return (await post({ model: "gpt-4.1", input: q })).output_text;
}
export async function judge(q: string, a: string) {
  const r = await post({ model: "gpt-4.1", input: `You are a judge. Score 1-10.\\n${q}\\n${a}` });
  return r.output_text;
}
export async function both(q: string) {
  return judge(q, await answer(q));
}
"""


def test_an_own_fetch_client_takes_its_model_from_the_request_it_is_given(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"lib/ask.ts": OWN_CLIENT})
    assert ("EL301", "lib/ask.ts", 10) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"lib/ask.ts": OWN_CLIENT.replace(
        'post({ model: "gpt-4.1", input: `You', 'post({ model: "o3", input: `You')})
    assert not _codes(tmp_path, {"EL301"})


GRAPH_A = """\
import { Annotation, StateGraph, START, END } from "@langchain/langgraph";
import { marker, writer } from "./models";

const DraftState = Annotation.Root({ topic: Annotation<string>(), draft: Annotation<string>(),
                                     mark: Annotation<string>() });

async function write(state: typeof DraftState.State) {
  const m = await writer.invoke(`Write a limerick about ${state.topic}`);
  return { draft: m.content };
}
async function judge(state: typeof DraftState.State) {
  const m = await marker.invoke(`You are a judge. Score it from 1 to 10.\\n<l>${state.draft}</l>`);
  return { mark: m.content };
}
export const graphA = new StateGraph(DraftState)
  .addNode("write", write).addNode("judge", judge)
  .addEdge(START, "write").addEdge("write", "judge").addEdge("judge", END).compile();
"""

GRAPH_B = """\
import { Annotation, StateGraph, START, END } from "@langchain/langgraph";
import { marker as noter } from "./models";

const NoteState = Annotation.Root({ topic: Annotation<string>(), draft: Annotation<string>() });
async function note(state: typeof NoteState.State) {
  const m = await noter.invoke(`Write a note about ${state.topic}`);
  return { draft: m.content };
}
export const graphB = new StateGraph(NoteState)
  .addNode("note", note).addEdge(START, "note").addEdge("note", END).compile();
"""


MODELS = """\
import { ChatOpenAI } from "@langchain/openai";

export const writer = new ChatOpenAI({ model: "gpt-4.1" });
export const marker = new ChatOpenAI({ model: "o3" });
"""


def test_two_graphs_with_one_state_key_name_keep_their_states_apart(tmp_path: Path) -> None:
    """Graph B's node writes ``draft`` with the judge's own model object; graph A's judge
    reads graph A's ``draft``, written on another model."""
    write_files(tmp_path, {"graphs/a.ts": GRAPH_A, "graphs/b.ts": GRAPH_B,
                           "graphs/models.ts": MODELS})
    assert not [g for g in _codes(tmp_path, {"EL301"}) if g[1] == "graphs/a.ts"]
    write_files(tmp_path, {"graphs/models.ts": MODELS.replace('"gpt-4.1"', '"o3"')})
    assert [g for g in _codes(tmp_path, {"EL301"}) if g[1] == "graphs/a.ts"]


CHAT = """\
from openai import OpenAI

client = OpenAI()


def respond(q):
    r = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": q}])
    text = r.choices[0].message.content
    ask = "You are a judge. Score the answer from 1 to 10: " + text
    v = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ask}])
    return text, v.choices[0].message.content


def repl():
    while True:
        q = input("You: ")
        if q == "exit":
            break
        print(respond(q))
"""


def test_a_loop_the_user_ends_is_a_conversation_not_a_refinement(tmp_path: Path) -> None:
    write_files(tmp_path, {"chat.py": CHAT})
    assert not _codes(tmp_path, {"EL501"})
    write_files(tmp_path, {"chat.py": CHAT.replace('q = input("You: ")', 'q = "again"')})
    assert ("EL501", "chat.py", 15) in _codes(tmp_path, {"EL501"})


CRITIC_CLASS = """\
import { Agent } from "@mastra/core/agent";
import { settings } from "./settings";

const author = new Agent({ name: "author", instructions: "Write a motto.",
                           model: `openai/${settings.llmName}` });
const critic = new Agent({ name: "critic", instructions: "Rate the motto from 1 to 10.",
                           model: `openai/${settings.llmName}` });

async function rate(agent: Agent, motto: string) {
  return (await agent.generate(`Rate from 1 to 10: <m>${motto}</m>`)).text;
}

export class Mottos {
  async loop(theme: string) {
    let motto = "";
    for (let i = 0; i < 3; i++) {
      motto = (await author.generate(`Theme: ${theme}. Last: ${motto}`)).text;
      const mark = await this.judge(motto);
      if (Number(mark) >= 8) break;
    }
    return motto;
  }
  private async judge(motto: string) {
    return rate(critic, motto);
  }
}
"""


def test_an_evaluator_reached_through_a_method_of_its_class_is_reported_once(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/settings.ts": SETTINGS, "src/mottos.ts": CRITIC_CLASS})
    got = [g for g in _codes(tmp_path, {"EL301"}) if g[1] == "src/mottos.ts"]
    assert got == [("EL301", "src/mottos.ts", 24)]


GATE = """\
import Anthropic from "@anthropic-ai/sdk";

const claude = new Anthropic();

async function review(text: string) {
  const r = await claude.messages.create({ model: "claude-sonnet-4-5", max_tokens: 200,
    messages: [{ role: "user", content: `Score it 0-100 as JSON {score}: <t>${text}</t>` }] });
  const block = r.content[0];
  const parsed = JSON.parse(block.type === "text" ? block.text : "{}");
  const score = Math.min(100, Math.max(0, Number(parsed.score) || 0));
  return { score, approved: score >= 75 };
}

export async function gate(text: string) {
  const verdict = await review(text);
  if (!verdict.approved) throw new Error(`rejected at ${verdict.score}`);
  return text;
}
"""


def test_a_pass_flag_the_helper_computes_from_the_score_is_no_word_of_the_judge(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"gate.ts": GATE})
    assert not _codes(tmp_path, {"EL503"})
    write_files(tmp_path, {"gate.ts": GATE.replace(
        "approved: score >= 75", "approved: parsed.approved").replace(
        "as JSON {score}", "as JSON {score, approved}")})
    assert ("EL503", "gate.ts", 16) in _codes(tmp_path, {"EL503"})


FORCED = """\
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { Agent } from "@mastra/core/agent";
import { z } from "zod";

const LIMIT = 4;
const bard = new Agent({ name: "bard", instructions: "Write a ballad.", model: "openai/gpt-4.1" });
const critic = new Agent({ name: "critic", model: "openai/o3",
  instructions: "You are a critic. Score the ballad from 1 to 10." });
const shape = z.object({ theme: z.string(), ballad: z.string(), mark: z.number(),
                         round: z.number() });

const pass = createStep({
  id: "pass", inputSchema: shape, outputSchema: shape,
  execute: async ({ inputData }) => {
    const round = inputData.round + 1;
    if (round > LIMIT) {
      return { ...inputData, round, mark: 10 };
    }
    const b = await bard.generate(`Theme: ${inputData.theme}`);
    const m = await critic.generate(`<b>${b.text}</b>`, { output: z.object({ mark: z.number() }) });
    return { ...inputData, round, ballad: b.text, mark: m.object.mark };
  },
});

export const ballads = createWorkflow({ id: "ballads", inputSchema: shape, outputSchema: shape })
  .dountil(pass, async ({ inputData }) => {
    const good = inputData.mark >= 8;
    console.log(`mark ${inputData.mark}`);
    return good;
  })
  .commit();
"""


def test_a_step_that_forces_the_exit_once_a_count_runs_out_bounds_the_loop(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/ballads.ts": FORCED})
    assert not _codes(tmp_path, {"EL501"})
    write_files(tmp_path, {"src/ballads.ts": FORCED.replace(
        "if (round > LIMIT) {\n      return { ...inputData, round, mark: 10 };\n    }\n", "")})
    assert ("EL501", "src/ballads.ts", 23) in _codes(tmp_path, {"EL501"})


AGENT_KIT = """\
import OpenAI from "openai";

const client = new OpenAI();

export const makeAgent = (config: { name: string; instructions: string; model: string }) => {
  const run = async (input: string) => {
    const r = await client.chat.completions.create({ model: config.model, messages: [
      { role: "system", content: config.instructions }, { role: "user", content: input }] });
    return r.choices[0].message.content ?? "";
  };
  return { run };
};
"""

AGENT_USE = """\
import { makeAgent } from "./kit";

const drafter = makeAgent({ name: "drafter", instructions: "Draft a product FAQ.",
                            model: "gpt-4o-mini" });
const grader = makeAgent({ name: "grader", instructions: "Grade the FAQ from 1 to 10.",
                           model: "gpt-4o-mini" });

export async function faq(product: string) {
  const draft = await drafter.run(`Product: ${product}`);
  const grade = await grader.run(`Grade this FAQ from 1 to 10: <faq>${draft}</faq>`);
  return { draft, grade };
}
"""


def test_an_object_of_closures_a_factory_returns_runs_on_the_model_it_was_given(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/kit.ts": AGENT_KIT, "src/faq.ts": AGENT_USE})
    assert ("EL301", "src/faq.ts", 10) in _codes(tmp_path, {"EL301"})
    write_files(tmp_path, {"src/faq.ts": AGENT_USE.replace(
        'from 1 to 10.",\n                           model: "gpt-4o-mini"',
        'from 1 to 10.",\n                           model: "o3"')})
    assert not _codes(tmp_path, {"EL301"})


LIB_CALLS = """\
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic();

export async function answer(q: string, model: string) {
  const r = await client.messages.create({ model, max_tokens: 500,
    messages: [{ role: "user", content: q }] });
  return r.content[0].type === "text" ? r.content[0].text : "";
}

export async function grade(q: string, a: string, model: string) {
  const r = await client.messages.create({ model, max_tokens: 300, messages: [{ role: "user",
    content: `You are a strict grader. Score the answer from 1 to 10.\\n${q}\\n<a>${a}</a>` }] });
  return r.content[0].type === "text" ? r.content[0].text : "";
}
"""

ROUTE = """\
import { answer, grade } from "./lib";

export async function POST(req: Request) {
  const { question, model, judge } = await req.json();
  const reply = await answer(question, model || "claude-haiku-4-5");
  const mark = await grade(question, reply, judge || "claude-haiku-4-5");
  return Response.json({ reply, mark });
}
"""


def test_a_model_given_as_value_or_default_is_the_default_when_nothing_else_is_known(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"app/lib.ts": LIB_CALLS, "app/route.ts": ROUTE})
    assert ("EL301", "app/route.ts", 6) in _codes(tmp_path, {"EL301", "EL302"})
    write_files(tmp_path, {"app/route.ts": ROUTE.replace('judge || "claude-haiku-4-5"',
                                                         'judge || "gpt-4.1"')})
    assert not _codes(tmp_path, {"EL301", "EL302"})


def test_a_parameter_or_a_default_inside_the_helper(tmp_path: Path) -> None:
    fallback = '({ model: model || "claude-haiku-4-5", max_tokens:'
    write_files(tmp_path, {"app/lib.ts": LIB_CALLS.replace("({ model, max_tokens:", fallback),
        "app/route.ts": ROUTE.replace('model || "claude-haiku-4-5"', "model").replace(
            'judge || "claude-haiku-4-5"', "judge")})
    # (both helpers fall back to one model: reported at the judge's own call)
    assert ("EL301", "app/lib.ts", 12) in _codes(tmp_path, {"EL301"})


TRACE_SCORER = """\
import { generateObject } from "ai";
import { z } from "zod";

export async function scoreTone({ trace }: { trace: { userMessage: string; assistantMessage: string;
                                                     plan: { stance: string } } }) {
  const r = await generateObject({ model: "openai/gpt-4.1", schema: z.object({ score: z.number() }),
    prompt: `You are a judge. Score the reply's tone from 1 to 5.\\nUser: ${trace.userMessage}\\n`
      + `<reply>${trace.assistantMessage}</reply>` });
  return r.object.score;
}
"""

TRACE_RUN = """\
import { scoreTone } from "./tone";

export async function suite(trace: any) {
  return scoreTone({ trace });
}
"""


def test_a_records_input_and_output_fields_are_what_a_judge_is_given(tmp_path: Path) -> None:
    """``trace.userMessage`` and ``trace.assistantMessage`` name the input and the output
    (EL103's aliases), whatever the record is called; its plan is the generator's context."""
    write_files(tmp_path, {"evals/tone.ts": TRACE_SCORER, "evals/suite.ts": TRACE_RUN})
    assert not _codes(tmp_path, {"EL202"})
    write_files(tmp_path, {"evals/tone.ts": TRACE_SCORER.replace(
        "User: ${trace.userMessage}", "Plan: ${trace.plan.stance}")})
    assert ("EL202", "evals/tone.ts", 6) in _codes(tmp_path, {"EL202"})


# A workflow whose check step sets ``source: "retry"`` itself when the score falls short, and a
# loop that stops on that word: the code's word, not the judge's (round V, in-sample).
RETRY_WORD = {
    "src/flow/steps.ts": """\
import { createStep } from "@mastra/core/workflows";
import { Agent } from "@mastra/core/agent";
import { z } from "zod";

const helper = new Agent({ name: "helper", model: "openai/gpt-4.1",
                           instructions: "Answer the customer's question." });
const grader = new Agent({ name: "grader", model: "anthropic/claude-haiku-4-5",
                           instructions: "You are a strict grader. Score the reply from 0 to 1." });

export const answerStep = createStep({
  id: "answer",
  inputSchema: z.object({ question: z.string(), source: z.string() }),
  outputSchema: z.object({ question: z.string(), source: z.string(), text: z.string() }),
  execute: async ({ inputData }) => {
    const out = await helper.generate(inputData.question);
    return { question: inputData.question, source: "helper", text: out.text };
  },
});

export const checkStep = createStep({
  id: "check",
  inputSchema: z.object({ question: z.string(), source: z.string(), text: z.string() }),
  outputSchema: z.object({ question: z.string(), source: z.string(), text: z.string() }),
  execute: async ({ inputData }) => {
    const rated = await grader.generate(`Reply: ${inputData.text}`, {
      structuredOutput: { schema: z.object({ score: z.number(), note: z.string() }) },
    });
    if (rated.object.score < 0.5) {
      return { question: inputData.question, source: "retry", text: rated.object.note };
    }
    return inputData;
  },
});
""",
    "src/flow/main.ts": """\
import { createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";
import { answerStep, checkStep } from "./steps";

const once = createWorkflow({ id: "once", inputSchema: z.any(), outputSchema: z.any() })
  .then(answerStep)
  .then(checkStep)
  .commit();

export const support = createWorkflow({ id: "support", inputSchema: z.any(),
                                        outputSchema: z.any() })
  .dountil(once, async ({ inputData, iterationCount }) => {
    if (iterationCount >= 3) return true;
    return inputData.source !== "retry";
  })
  .commit();
""",
}


def test_a_stop_word_the_code_sets_after_a_score_check_is_no_judges_word(
        tmp_path: Path) -> None:
    write_files(tmp_path, RETRY_WORD)
    found = _codes(tmp_path, {"EL501", "EL503"})
    assert found == []  # bounded by the engine's count; "retry" is the code's word
    # the same loop with the judge's own note as the stop word is the judge's
    steps = tmp_path / "src/flow/steps.ts"
    steps.write_text(steps.read_text().replace(
        'source: "retry", text: rated.object.note', 'source: rated.object.note, text: ""'))
    assert ("EL503", "src/flow/main.ts", 12) in _codes(tmp_path, {"EL503"})


# A pass computed from the score and a list of the judge's issues: the score decides in code.
SEVERITY_GATE = """\
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic();

async function ask(system: string, prompt: string) {
  const msg = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 2000,
    system, messages: [{ role: "user", content: prompt }] });
  return msg.content[0].type === "text" ? msg.content[0].text : "";
}

export async function buildDeck(brief: string) {
  let deck = "";
  let notes = "";
  for (let round = 0; round < 3; round++) {
    deck = await ask("Write an HTML slide deck for the brief.", `${brief}\\n${notes}`);
    const raw = await ask("You are a slide reviewer. Score the deck from 0 to 1 and list issues.",
                          `Review this generated HTML deck:\\n${deck}`);
    const review = JSON.parse(raw) as { score: number; issues: { level: string }[];
                                        fixes: string };
    const blocking = review.issues.some((i) => i.level === "blocker");
    const good = review.score >= 0.7 && !blocking;
    if (good) break;
    notes = review.fixes;
  }
  return deck;
}
"""


def test_a_word_of_the_judge_beside_a_score_checked_in_code_is_no_stop_word(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"deck.ts": SEVERITY_GATE})
    assert [f for f in _codes(tmp_path, {"EL503"})] == []
    # the word alone decides: the judge's
    (tmp_path / "deck.ts").write_text(SEVERITY_GATE.replace(
        "review.score >= 0.7 && !blocking", "!blocking"))
    assert ("EL503", "deck.ts", 22) in _codes(tmp_path, {"EL503"})


# A lazily made model object built on the factory's parameter, run by a helper whose own
# option (with a default) picks it; the judge and the writer leave the option out (round V).
LAZY_FACTORY = {
    "lib/llm.ts": """\
import { ChatAnthropic } from "@langchain/anthropic";

let cached: ChatAnthropic | null = null;

const shared = (name: string) => {
  if (!cached) {
    cached = new ChatAnthropic({ model: name, maxTokens: 4000 });
  }
  return cached;
};

export async function complete({ system, user, modelName = "claude-sonnet-4-5" }:
                               { system: string; user: string; modelName?: string }) {
  const llm = shared(modelName);
  const out = await llm.invoke([["system", system], ["human", user]]);
  return String(out.content);
}
""",
    "lib/pipeline.ts": """\
import { complete } from "./llm";

export async function draftAndCheck(spec: string) {
  const code = await complete({ system: "You write TypeScript modules to the spec given.",
                                user: spec });
  const review = await complete({
    system: "You are a strict code reviewer. Score the module from 0 to 100.",
    user: `<module>${code}</module>` });
  return { code, review };
}
""",
}


def test_an_object_a_factory_builds_on_its_parameter_takes_the_model_each_call_gives(
        tmp_path: Path) -> None:
    write_files(tmp_path, LAZY_FACTORY)
    assert _codes(tmp_path, {"EL301"}) == [("EL301", "lib/pipeline.ts", 6)]
    # the reviewer picks another model through the option
    pipeline = tmp_path / "lib/pipeline.ts"
    pipeline.write_text(pipeline.read_text().replace(
        "user: `<module>${code}</module>` });",
        "user: `<module>${code}</module>`, modelName: \"claude-haiku-4-5\" });"))
    assert _codes(tmp_path, {"EL301"}) == []


# A wrapper that spreads its options into the inner helper's and forwards the model it took
# out of them: a judge's own model reaches the inner call (round U's false EL301, in-sample).
SPREAD_OPTIONS = {
    "ai/core.ts": """\
import OpenAI from "openai";

const client = new OpenAI();

type Opts = { model?: string; temperature?: number; label?: string };

export async function chat(prompt: string, options: Opts = {}) {
  const { model = "gpt-4.1", temperature = 0.2 } = options;
  const r = await client.chat.completions.create({ model, temperature,
    messages: [{ role: "user", content: prompt }] });
  return r.choices[0].message.content ?? "";
}

export async function chatJson(prompt: string, options: Opts = {}) {
  const text = await chat(`${prompt}\\nReply in JSON.`, { ...options, temperature: 0 });
  return JSON.parse(text);
}

export async function routed(prompt: string, options: Opts = {}) {
  const { label, model, ...rest } = options;
  return chatJson(prompt, { ...rest, model });
}
""",
    "ai/use.ts": """\
import { routed } from "./core";

export async function essayAndGrade(topic: string) {
  const essay = await routed(`Write an essay about ${topic}.`);
  const grade = await routed(`You are a strict grader. Score this essay from 1 to 10: ${essay}`,
                             { model: "gpt-4.1-mini" });
  return { essay, grade };
}
""",
}


def test_a_model_passed_through_spread_options_reaches_the_inner_call(tmp_path: Path) -> None:
    write_files(tmp_path, SPREAD_OPTIONS)
    assert _codes(tmp_path, {"EL301"}) == []  # the grader runs on gpt-4.1-mini
    use = tmp_path / "ai/use.ts"
    use.write_text(use.read_text().replace('{ model: "gpt-4.1-mini" }', '{ label: "grade" }'))
    assert _codes(tmp_path, {"EL301"}) == [("EL301", "ai/use.ts", 5)]  # the default, both


# A search loop that hands back only whether a judged attempt won: a bool, not the attempt.
WON_FLAG = """\
import OpenAI from "openai";

const ai = new OpenAI();

async function ask(model: string, content: string) {
  const r = await ai.chat.completions.create({ model, messages: [{ role: "user", content }] });
  return r.choices[0].message.content ?? "";
}

export async function hunt(goal: string, feedback = "") {
  let winner: string | null = null;
  let route = "";
  for (let hop = 0; hop < 5 && !winner; hop++) {
    route = await ask("gpt-4.1", `Propose a route to: ${goal}. ${feedback}`);
    const verdict = await ask("gpt-4.1-mini",
      `You are a strict judge. Score this route from 1 to 10: <route>${route}</route>`);
    if (Number(verdict) >= 8) winner = route;
    feedback = verdict;
  }
  return { found: !!winner, tries: 5 };
}
"""


def test_a_record_of_whether_an_attempt_won_is_not_the_last_attempt(tmp_path: Path) -> None:
    write_files(tmp_path, {"hunt.ts": WON_FLAG})
    assert _codes(tmp_path, {"EL502"}) == []
    (tmp_path / "hunt.ts").write_text(WON_FLAG.replace("{ found: !!winner, tries: 5 }",
                                                       "{ found: route, tries: 5 }"))
    assert _codes(tmp_path, {"EL502"}) == [("EL502", "hunt.ts", 20)]


# A wrapper taking one options object, called with an object literal (lowered as keywords),
# on a model kept in a config object of constants imported from a settings file.
OPTIONS_OBJECT = {
    "src/llm/client.ts": """\
import Anthropic from "@anthropic-ai/sdk";
import { REVIEW_MODEL } from "../settings";

export const MODELS = { review: REVIEW_MODEL, draft: REVIEW_MODEL };

const sdk = new Anthropic();

export async function ask(opts: { model?: string; system: string; prompt: string }) {
  const model = opts.model || MODELS.review;
  const r = await sdk.messages.create({ model, max_tokens: 1200, system: opts.system,
    messages: [{ role: "user", content: opts.prompt }] });
  return r.content[0].type === "text" ? r.content[0].text : "";
}
""",
    "src/settings.ts": ('export const REVIEW_MODEL = process.env.REVIEW_MODEL ?? '
                        '"claude-sonnet-4-5";\n'),
    "src/jobs/brief.ts": """\
import { ask, MODELS } from "../llm/client";

export async function brief(doc: string) {
  const summary = await ask({ model: MODELS.draft, system: "Summarise the document.",
                              prompt: doc });
  const check = await ask({ model: MODELS.review,
                            system: "You are a strict grader. Score the summary from 1 to 10.",
                            prompt: `<summary>${summary}</summary>` });
  return { summary, check };
}
""",
}


def test_an_options_object_hands_its_fields_to_the_helper(tmp_path: Path) -> None:
    write_files(tmp_path, OPTIONS_OBJECT)
    found = lint_tree(tmp_path, {"EL301"}).findings
    assert [(f.code, f.path, f.line) for f in found] == [("EL301", "src/jobs/brief.ts", 6)]
    # the grader's system prompt reached the helper's call (its role is the text's)
    assert "MODELS.review" in found[0].message
    brief = tmp_path / "src/jobs/brief.ts"
    brief.write_text(brief.read_text().replace("model: MODELS.review,",
                                               'model: "claude-haiku-4-5",'))
    assert _codes(tmp_path, {"EL301"}) == []


# A judge call handed to a retry wrapper as an arrow function: its output comes back through the
# wrapper; a `typeof` test of the parsed fields is a type check (validation), as isinstance is.
RETRY_THUNK = """\
import Anthropic from "@anthropic-ai/sdk";
const claude = new Anthropic();

async function persist<T>(job: () => Promise<T>, tries: number): Promise<T> {
  let last: unknown;
  for (let k = 0; k < tries; k++) {
    try { return await job(); } catch (e) { last = e; }
  }
  throw last;
}

export async function rate(answer: string) {
  const res = await persist(() => claude.messages.create({ model: "claude-haiku-4-5",
    max_tokens: 200,
    system: "You are a strict grader. Score the answer from 1 to 5 and reply with JSON.",
    messages: [{ role: "user", content: `<answer>${answer}</answer>` }] }), 3);
  const text = res.content[0].type === "text" ? res.content[0].text : "";
  const verdict = JSON.parse(text);
  CHECK
  return verdict.score;
}
"""


def test_a_judge_run_by_a_retry_wrapper_and_a_typeof_check(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/rate.ts": RETRY_THUNK.replace("CHECK", "")})
    assert _codes(tmp_path, {"EL504"}) == [("EL504", "src/rate.ts", 18)]
    write_files(tmp_path, {"src/rate.ts": RETRY_THUNK.replace(
        "CHECK", 'if (typeof verdict.score !== "number") throw new Error("bad verdict");')})
    assert _codes(tmp_path, {"EL504"}) == []


# Two instances of one client class built with different models: the class's default is all
# that is known of each end's model, so a match of defaults is a warning that says so.
CLIENT_CLASS = """\
import Anthropic from "@anthropic-ai/sdk";
export class Claude {
  private api: Anthropic;
  private model: string;
  constructor(cfg: { apiKey: string; model?: string }) {
    this.api = new Anthropic({ apiKey: cfg.apiKey });
    this.model = cfg.model || "claude-sonnet-4-5";
  }
  async send(text: string, system?: string): Promise<string> {
    const r = await this.api.messages.create({ model: this.model, max_tokens: 500, system,
                                               messages: [{ role: "user", content: text }] });
    return r.content[0].type === "text" ? r.content[0].text : "";
  }
}
"""

CLIENT_ROLES = """\
import { Claude } from "./client";
export class Drafter {
  constructor(private client: Claude) {}
  async draft(need: string) { return this.client.send(`Write an API spec for ${need}`); }
}
export class Grader {
  constructor(private client: Claude) {}
  async grade(spec: string) {
    const out = await this.client.send(`Score this spec from 0 to 100:\\n<spec>${spec}</spec>`,
                                       "You are a strict reviewer.");
    return Number(out);
  }
}
"""

CLIENT_MAIN = """\
import { Claude } from "./client";
import { Drafter, Grader } from "./roles";
export async function run(need: string) {
  const d = new Drafter(new Claude({ apiKey: "k", model: "claude-opus-4-1" }));
  const g = new Grader(new Claude({ apiKey: "k", model: "claude-haiku-4-5" }));
  return g.grade(await d.draft(need));
}
"""


def test_a_class_default_model_on_both_ends_is_a_warning(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/client.ts": CLIENT_CLASS, "src/roles.ts": CLIENT_ROLES,
                           "src/main.ts": CLIENT_MAIN})
    found = lint_tree(tmp_path, {"EL301"}).findings
    assert [(f.code, f.path, f.severity.value) for f in found] == \
        [("EL301", "src/roles.ts", "warning")]
    assert "class's default model" in found[0].message


# Steps that take the client as a parameter typed with the project's own class: its method
# runs there (on the class's default model: a warning; on a model the class fixes: an error).
TYPED_STEPS = """\
import { Claude } from "./client";
export async function draftSpec(api: Claude, need: string) {
  return api.send(`Write an API spec for ${need}`);
}
export async function gradeSpec(api: Claude, spec: string) {
  const out = await api.send(`Score this spec from 0 to 100:\\n<spec>${spec}</spec>`,
                             "You are a strict reviewer.");
  return Number(out);
}
export async function cycle(api: Claude, need: string) {
  return gradeSpec(api, await draftSpec(api, need));
}
"""


def test_a_method_on_a_parameter_typed_with_a_project_class(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/client.ts": CLIENT_CLASS, "src/steps.ts": TYPED_STEPS})
    found = lint_tree(tmp_path, {"EL301"}).findings
    assert [(f.path, f.line, f.severity.value) for f in found] == [("src/steps.ts", 6, "warning")]
    write_files(tmp_path, {"src/client.ts": CLIENT_CLASS.replace(
        'cfg.model || "claude-sonnet-4-5"', '"claude-sonnet-4-5"')})
    found = lint_tree(tmp_path, {"EL301"}).findings
    assert [(f.path, f.line, f.severity.value) for f in found] == [("src/steps.ts", 6, "error")]
