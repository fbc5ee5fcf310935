"""TypeScript and JavaScript files: the same rules as Python, read through the lowering
(frontends/scriptparse, scriptlower, script_front) and the catalogue's script packages."""

from __future__ import annotations

import ast
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evallint.catalogue import CatalogueError, parse_framework
from evallint.cli import main
from evallint.config import Config
from evallint.frontend import ParseError
from evallint.frontends.script_front import build_script_facts
from evallint.frontends.scriptlower import lower
from evallint.frontends.scriptparse import module_name, parse, resolve_specifier
from evallint.pyflow.analysis import Analysis
from evallint.pyflow.providers import CAT
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files

LLM_HELPER = """import OpenAI from "openai";

const openai = new OpenAI();
export const MODEL = process.env.REVIEW_MODEL ?? "gpt-4o-mini";

export async function complete(prompt: string, system?: string): Promise<string> {
  const res = await openai.chat.completions.create({
    model: MODEL,
    messages: [
      ...(system ? [{ role: "system" as const, content: system }] : []),
      { role: "user", content: prompt },
    ],
  });
  return res.choices[0].message.content ?? "";
}
"""

LOOP = """import { complete } from "./lib/llm.js";

const JUDGE = "You are an impartial judge. Grade the summary from 1 to 10.";

export async function improve(doc: string) {
  let summary = await complete(`Summarise:\\n${doc}`, "You write crisp summaries.");
  while (true) {
    const verdict = await complete(`Summary:\\n${summary}`, JUDGE);
    const score = JSON.parse(verdict).score;
    if (score >= 8) break;
    summary = await complete(`Improve this summary:\\n${summary}\\nFeedback: ${verdict}`);
  }
  return summary;
}
"""

GRAPH = """import { ChatAnthropic } from "@langchain/anthropic";
import { StateGraph, MessagesAnnotation, START, END } from "@langchain/langgraph";

const llm = new ChatAnthropic({ model: "claude-sonnet-4-5" });

async function writeLetter(state: typeof MessagesAnnotation.State) {
  const reply = await llm.invoke([["system", "You write cover letters."], ...state.messages]);
  return { messages: [reply] };
}

async function reviewLetter(state: typeof MessagesAnnotation.State) {
  const last = state.messages[state.messages.length - 1];
  const verdict = await llm.invoke([
    ["system", "Score the cover letter from 1 to 10 and list fixes."],
    ["human", String(last.content)],
  ]);
  return { messages: [{ role: "user", content: String(verdict.content) }] };
}

function next(state: typeof MessagesAnnotation.State) {
  return state.messages.length > 6 ? END : "review";
}

export const app = new StateGraph(MessagesAnnotation)
  .addNode("write", writeLetter)
  .addNode("review", reviewLetter)
  .addEdge(START, "write")
  .addConditionalEdges("write", next)
  .addEdge("review", "write")
  .compile();
"""


def _codes(result: object) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.path, f.line) for f in result.findings)  # type: ignore[attr-defined]


def _lowered(code: str, rel: str = "src/app.ts") -> ast.Module:
    tree = parse(code, rel)
    mod, _ = lower(tree.root_node, code.encode(), rel, CAT)
    return mod


def test_a_helper_imported_by_a_relative_specifier_links_judge_and_generator(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"src/lib/llm.ts": LLM_HELPER, "src/pipeline.ts": LOOP})
    got = _codes(lint_tree(tmp_path, {"EL301", "EL501", "EL504"}))
    assert ("EL301", "src/pipeline.ts", 8) in got  # both through one env-backed constant
    assert ("EL501", "src/pipeline.ts", 7) in got  # while (true) with no counter
    assert ("EL504", "src/pipeline.ts", 9) in got  # JSON.parse of the judge's reply


def test_a_counted_for_loop_is_a_bound(tmp_path: Path) -> None:
    bounded = LOOP.replace("while (true) {", "for (let round = 0; round < 3; round++) {")
    write_files(tmp_path, {"src/lib/llm.ts": LLM_HELPER, "src/pipeline.ts": bounded})
    assert not [f for f in lint_tree(tmp_path, {"EL501"}).findings]


def test_langgraph_js_builder_chain_and_last_message(tmp_path: Path) -> None:
    write_files(tmp_path, {"agent/graph.ts": GRAPH})
    got = _codes(lint_tree(tmp_path, {"EL301", "EL202"}))
    # one chat model object writes and reviews; the reviewer reads the last message only
    assert got == [("EL301", "agent/graph.ts", 13)]
    whole = GRAPH.replace('["human", String(last.content)],', "...state.messages,")
    write_files(tmp_path, {"agent/graph.ts": whole})
    assert ("EL202", "agent/graph.ts", 13) in _codes(lint_tree(tmp_path, {"EL202"}))


def test_a_file_named_like_a_package_is_not_that_package(tmp_path: Path) -> None:
    agents = """import { Agent, run } from "@openai/agents";
const writer = new Agent({ name: "Writer", instructions: "Write a tagline.", model: "gpt-4.1" });
const editor = new Agent({ name: "Editor", model: "gpt-4.1",
  instructions: "Score the tagline from 1 to 10 for punch. Reply with the number." });
export async function tagline(product: string) {
  const draft = await run(writer, `Product: ${product}`);
  return run(editor, `Tagline: ${draft.finalOutput}`);
}
"""
    write_files(tmp_path, {"agents.ts": agents})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "agents.ts", 7)]


def test_commonjs_require_and_a_javascript_file(tmp_path: Path) -> None:
    code = """const Anthropic = require("@anthropic-ai/sdk");
const client = new Anthropic();
async function draft(topic) {
  const m = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 500,
    messages: [{ role: "user", content: `Write about ${topic}` }] });
  return m.content[0].text;
}
async function rate(text) {
  const m = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 5,
    system: "Rate the text from 1 to 5 for clarity. Reply with the digit.",
    messages: [{ role: "user", content: text }] });
  return m.content[0].text;
}
module.exports.run = async (topic) => rate(await draft(topic));
"""
    write_files(tmp_path, {"bin/run.cjs": code})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "bin/run.cjs", 9)]


def test_a_part_the_grammar_cannot_read_is_a_note_and_the_rest_is_analysed(
        tmp_path: Path) -> None:
    # a statement the grammar cannot read (a typo): the judge below it is still read
    page = ('export function Save() {\n  return <button>Save</button> +* 1;\n}\n'
            + LOOP)
    write_files(tmp_path, {"src/broken.ts": "const x = {\n  a: 1,\n  b: openai(\n",
                           "src/lib/llm.ts": LLM_HELPER, "src/page.tsx": page})
    result = lint_tree(tmp_path, {"EL901", "EL301"})
    got = _codes(result)
    assert ("EL301", "src/page.tsx", 11) in got
    broken = [f for f in result.findings if f.path == "src/broken.ts"]
    assert len(broken) == 1 and broken[0].code == "EL901" and broken[0].line == 3
    assert "TypeScript syntax error" in broken[0].message
    assert broken[0].severity.value == "note"
    notes = [f for f in result.findings if f.path == "src/page.tsx" and f.code == "EL901"]
    assert [f.line for f in notes] == [2] and notes[0].severity.value == "note"


def test_a_model_kept_in_a_local_variable(tmp_path: Path) -> None:
    code = """import { generateText } from "ai";
import { anthropic } from "@ai-sdk/anthropic";

export async function refine(doc: string) {
  const model = anthropic("claude-sonnet-4-5");
  const { text: draft } = await generateText({ model, system: "You rewrite documents.",
                                               prompt: doc });
  const { text: critique } = await generateText({ model, prompt: draft,
    system: "You are a strict critic. Score the rewrite from 1 to 10." });
  return { draft, critique };
}
"""
    write_files(tmp_path, {"critic.ts": code})
    result = lint_tree(tmp_path, {"EL301"})
    assert _codes(result) == [("EL301", "critic.ts", 8)]
    assert "`claude-sonnet-4-5`" in result.findings[0].message


def test_bundles_declarations_and_node_modules_are_not_read(tmp_path: Path) -> None:
    judge = LOOP.replace("./lib/llm.js", "../lib/llm.js")
    write_files(tmp_path, {
        "node_modules/pkg/index.ts": judge, "dist/app.min.js": judge,
        "types/app.d.ts": "export declare function complete(p: string): Promise<string>;\n",
        "web/bundle.js": "var a=1;" + "x" * 5000 + "\n" + judge,
        "src/lib/llm.ts": LLM_HELPER})
    result = lint_tree(tmp_path, {"EL301", "EL501", "EL901"})
    assert not result.findings
    runner = CliRunner()
    out = runner.invoke(main, ["check", "--no-cache", "--show-files", str(tmp_path)])
    listed = out.output
    assert "node_modules" not in listed and "types/app.d.ts" not in listed.replace("\\", "/")
    assert "typescript" in listed


def test_template_literal_placeholder_position_and_its_fix(tmp_path: Path) -> None:
    code = """import OpenAI from "openai";
const client = new OpenAI();
export async function gradeEssay(response: string) {
  const r = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [
    { role: "user",
      content: `Grade the essay from 1 to 10. Reply with the number.\\n\\n${response}` }] });
  return r.choices[0].message.content;
}
"""
    write_files(tmp_path, {"essay.ts": code})
    findings = [f for f in lint_tree(tmp_path, {"EL105"}).findings if f.code == "EL105"]
    assert [(f.line, f.column) for f in findings] == [(6, code.splitlines()[5].index(
        "${response}") + 3)]
    runner = CliRunner()
    out = runner.invoke(main, ["check", "--no-cache", "--select", "EL105", "--fix",
                               "--unsafe-fixes", str(tmp_path)])
    assert out.exit_code in (0, 1), out.output
    fixed = (tmp_path / "essay.ts").read_text()
    assert "<response>${response}</response>" in fixed or "<output>${response}</output>" in fixed


def test_module_names_and_specifiers() -> None:
    assert module_name("src/lib/judge.ts") == "./src/lib/judge"
    assert module_name("src/lib/index.tsx") == "./src/lib"
    assert resolve_specifier("./judge.js", "src/app.ts") == "./src/judge"
    assert resolve_specifier("../lib", "src/app/page.ts") == "./src/lib"
    assert resolve_specifier("@/lib/judge", "web/src/app/page.ts") == "./web/src/lib/judge"
    assert resolve_specifier("openai", "src/app.ts") is None
    assert resolve_specifier("../../outside", "src/app.ts") is None


def test_lowering_reads_the_language_as_python_would() -> None:
    mod = _lowered("""import Anthropic from "@anthropic-ai/sdk";
import { ChatOpenAI } from "@langchain/openai";
import { StateGraph } from "@langchain/langgraph";
const n = xs.length;
const v = JSON.parse(text);
const ok = reply.includes("PASS");
for (let i = 0; i <= 3; i++) { go(i); }
const m = process.env.JUDGE_MODEL;
""")
    text = ast.unparse(mod)
    assert "from anthropic import Anthropic" in text
    assert "from langchain_js import ChatOpenAI" in text
    assert "from langgraph import StateGraph" in text  # not @langchain/*'s glob
    assert "n = len(xs)" in text
    assert "v = json.loads(text)" in text
    assert "ok = 'PASS' in reply" in text
    assert "for i in range(0, 3 + 1):" in text
    assert "m = os.getenv('JUDGE_MODEL')" in text


def test_object_argument_is_keywords_unless_the_local_function_takes_an_object() -> None:
    mod = _lowered("""function judge({ draft, rubric }) { return draft; }
function plain(opts) { return opts.model; }
judge({ draft: d, rubric: r });
plain({ model: "x" });
client.messages.create({ model: "m", max_tokens: 5 });
""")
    text = ast.unparse(mod)
    assert "judge(draft=d, rubric=r)" in text
    assert "plain({'model': 'x'})" in text
    assert "client.messages.create(model='m', max_tokens=5)" in text
    assert "def judge(*, draft, rubric):" in text


def test_a_script_package_must_be_the_frameworks_module() -> None:
    doc = {"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
           "packages": ["xpkg"], "scripts": [{"package": "x-js", "module": "other"}]}
    try:
        parse_framework(doc, "rules/models/x.yaml")
    except CatalogueError as exc:
        assert "scripts[0]" in str(exc) and "not in the framework's packages" in str(exc)
    else:
        raise AssertionError("a script package outside the framework was accepted")


def test_a_wrapper_forwarding_its_argument_a_pipe_chain_and_the_genai_sdk(
        tmp_path: Path) -> None:
    wrapper = """import OpenAI from "openai";
const openai = new OpenAI();
async function complete(args) {
  return openai.chat.completions.create(args);
}
export async function answerAndJudge(q) {
  const a = await complete({ model: "gpt-4o", messages: [{ role: "user", content: q }] });
  const j = await complete({ model: "gpt-4o", messages: [
    { role: "system", content: "You are a strict judge. Score the answer from 1 to 10." },
    { role: "user", content: `Q: ${q}\\nA: ${a.choices[0].message.content}` }] });
  return j.choices[0].message.content;
}
"""
    pipe = """import { ChatOpenAI } from "@langchain/openai";
import { ChatPromptTemplate } from "@langchain/core/prompts";
const model = new ChatOpenAI({ model: "gpt-4o-mini" });
const grader = ChatPromptTemplate.fromMessages([
  ["system", "You are an expert evaluator. Rate the answer from 1 to 5 for accuracy."],
  ["human", "Question: {question}\\nAnswer: {answer}"],
]).pipe(model);
export async function lesson(question: string) {
  const answer = await model.invoke(question);
  return grader.invoke({ question, answer: String(answer.content) });
}
"""
    genai = """import { GoogleGenAI } from "@google/genai";
const ai = new GoogleGenAI({});
export async function haiku(topic: string) {
  const d = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: topic });
  const r = await ai.models.generateContent({ model: "gemini-2.5-flash",
    contents: `You are a judge. Score this haiku from 1 to 10:\\n${d.text}` });
  return r.text;
}
"""
    write_files(tmp_path, {"wrap.js": wrapper, "lesson.ts": pipe, "gem.ts": genai})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [
        ("EL301", "gem.ts", 5), ("EL301", "lesson.ts", 10), ("EL301", "wrap.js", 8)]
    text = ast.unparse(_lowered(wrapper, "wrap.js"))
    assert "def complete(**args):" in text and "create(**args)" in text


PF_CONFIG = """prompts:
  - "Answer the customer: {{question}}"
providers:
  - id: file://providers/support.ts
tests:
  - vars:
      question: How do I reset my password?
    assert:
      - type: javascript
        value: file://graders/tone.js
      - type: llm-rubric
        value: The reply is polite and gives the reset steps.
        provider: anthropic:messages:claude-sonnet-4-5
"""
PF_PROVIDER = """import Anthropic from "@anthropic-ai/sdk";
const client = new Anthropic();
export default class SupportProvider {
  id() { return "support-bot"; }
  async callApi(prompt: string) {
    const msg = await client.messages.create({ model: "MODEL", max_tokens: 500,
      system: "You are a support agent.", messages: [{ role: "user", content: prompt }] });
    return { output: msg.content[0].type === "text" ? msg.content[0].text : "" };
  }
}
"""
PF_GRADER = """const Anthropic = require("@anthropic-ai/sdk");
const client = new Anthropic();
module.exports = async (output, context) => {
  const msg = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 5,
    system: "Rate the tone of the support reply from 1 to 5. Reply with the digit.",
    messages: [{ role: "user", content: `<reply>${output}</reply>` }] });
  const score = Number(msg.content[0].text);
  return { pass: score >= 4, score: score / 5 };
};
"""


def test_promptfoo_javascript_grader_and_typescript_provider(tmp_path: Path) -> None:
    write_files(tmp_path, {"promptfooconfig.yaml": PF_CONFIG,
                           "providers/support.ts": PF_PROVIDER.replace("MODEL",
                                                                       "claude-sonnet-4-5"),
                           "graders/tone.js": PF_GRADER})
    got = _codes(lint_tree(tmp_path, {"EL301", "EL303"}))
    # the code grader and the rubric grader both run the provider's own model
    assert got == [("EL301", "graders/tone.js", 4), ("EL303", "promptfooconfig.yaml", 13)]
    write_files(tmp_path, {"providers/support.ts": PF_PROVIDER.replace("MODEL", "gpt-4o")})
    assert _codes(lint_tree(tmp_path, {"EL301", "EL303"})) == []


def test_a_retry_wrapper_runs_its_callback_where_it_stands(tmp_path: Path) -> None:
    code = """import Anthropic from "@anthropic-ai/sdk";
import pRetry from "p-retry";
const client = new Anthropic();
export async function optimize(task: string) {
  let current = "";
  for (let i = 0; i <= 3; i++) {
    const gen = await pRetry(() => client.messages.create({ model: "claude-haiku-4-5",
      max_tokens: 800, messages: [{ role: "user", content: task }] }));
    current = gen.content[0].type === "text" ? gen.content[0].text : "";
    const ev = await pRetry(async () => {
      const r = await client.messages.create({ model: "claude-opus-4-1", max_tokens: 200,
        system: "You are a strict evaluator. Score the output from 1 to 10 as JSON.",
        messages: [{ role: "user", content: `<output>${current}</output>` }] });
      return r;
    });
    const verdict = JSON.parse(ev.content[0].type === "text" ? ev.content[0].text : "{}");
    if (verdict.score >= 8) break;
  }
  return { finalOutput: current };
}
"""
    write_files(tmp_path, {"loop.ts": code})
    # the judge in the block callback reads `current` of the function around it
    assert _codes(lint_tree(tmp_path, {"EL302", "EL502", "EL504"})) == [
        ("EL302", "loop.ts", 11), ("EL502", "loop.ts", 19), ("EL504", "loop.ts", 16)]


def test_params_object_handed_to_the_sdk_and_a_client_from_a_getter(tmp_path: Path) -> None:
    code = """import OpenAI from "openai";
function getClient() { return new OpenAI(); }
export async function check(question: string) {
  const genParams = { model: "gpt-4o", messages: [{ role: "user" as const, content: question }] };
  const a = await getClient().chat.completions.create(genParams);
  const answer = a.choices[0].message.content;
  const judgeParams = useTools
    ? { model: "gpt-4o", tools: [], messages: [{ role: "system" as const,
        content: "You are a strict judge. Score the answer from 1 to 10." },
        { role: "user" as const, content: `<answer>${answer}</answer>` }] }
    : { model: "gpt-4o", messages: [{ role: "system" as const,
        content: "You are a strict judge. Score the answer from 1 to 10." },
        { role: "user" as const, content: `<answer>${answer}</answer>` }] };
  const j = await getClient().chat.completions.create(judgeParams);
  return j.choices[0].message.content;
}
"""
    write_files(tmp_path, {"check.ts": code})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "check.ts", 14)]


def test_a_spread_config_object_gives_both_chat_models_its_model(tmp_path: Path) -> None:
    code = """import { ChatOpenAI } from "@langchain/openai";
const CONFIG = { modelName: "kimi-k2-turbo-preview", maxRetries: 2 };
const writer = new ChatOpenAI({ ...CONFIG, temperature: 0.7 });
const critic = new ChatOpenAI({ ...CONFIG, temperature: 0 });
export async function reflect(topic: string) {
  const essay = await writer.invoke(`Write an essay about ${topic}`);
  return critic.invoke([["system", "You are a strict judge. Score the essay from 1 to 10."],
                        ["human", String(essay.content)]]);
}
const A = { ...B, model: "x" };
const B = { ...A };
"""
    write_files(tmp_path, {"refl.ts": code})
    result = lint_tree(tmp_path, {"EL301"})
    assert _codes(result) == [("EL301", "refl.ts", 7)]
    assert "`kimi-k2-turbo-preview`" in result.findings[0].message


def test_workflow_steps_run_in_place_and_generate_object_output(tmp_path: Path) -> None:
    code = """import { WorkflowEntrypoint } from "cloudflare:workers";
import { generateObject } from "ai";
import { openai } from "@ai-sdk/openai";
import { z } from "zod";
export class Optimiser extends WorkflowEntrypoint {
  async run(event: any, step: any) {
    const model = openai("gpt-4o-mini");
    const draft = await step.do("draft", async () => {
      const { object } = await generateObject({ model, schema: z.object({ d: z.string() }),
        prompt: `Describe ${event.payload.product}` });
      return object.d;
    });
    return step.do("evaluate", async () => {
      const { object } = await generateObject({ model, schema: z.object({ score: z.number() }),
        system: "You are a strict evaluator. Score the description from 1 to 10.",
        prompt: `<draft>${draft}</draft>` });
      return object;
    });
  }
}
"""
    write_files(tmp_path, {"wf.ts": code})
    # the judging step reads the draft step's output, a variable of the function around it
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "wf.ts", 14)]


def test_an_escaped_nul_in_a_template_literal_is_text(tmp_path: Path) -> None:
    code = """import OpenAI from "openai";
const client = new OpenAI();
function key(a: string, b: string | null) { return `${a}\\0${b ?? ""}`; }
export const JUDGE_PROMPT = `You are a strict judge. Score the answer ${key("a", null)}\\0 now.`;
export async function judge(answer: string) {
  return client.chat.completions.create({ model: "gpt-4o", messages: [
    { role: "user", content: `${JUDGE_PROMPT}\\n<answer>${answer}</answer>` }] });
}
"""
    write_files(tmp_path, {"key.ts": code})
    result = lint_tree(tmp_path)
    assert not result.tool_errors, result.tool_errors


SCRIPT_PIECES = [
    'import OpenAI from "openai";', "const c = new OpenAI();", "let x = `a ${b} \\0 c`;",
    "for (let i = 0; i < n; i++) {", "}", "while (true) {", "do { y++ } while (y < 3);",
    "const { a, b: [d, ...e] = [], ...f } = await g({ ...h, [k]: 1 });",
    "xs.map(async (x) => { return await c.chat.completions.create(x); });",
    "const p = { model: m, messages: [[\"system\", s], ...rest] }; c.responses.create(p);",
    "new StateGraph(S).addNode(\"a\", f).addEdge(START, \"a\").compile();",
    "class K extends B { #p = 1; constructor(private q: T) { super(); } m = () => this.#p; }",
    "switch (v) { case 1: break; default: }", "label: for (const k in o) { continue label; }",
    "export default async function (req, res) { res.json(JSON.parse(r)); }",
    "<div>a & b</div>", "const y = a?.b?.[c]!.d as any satisfies T;", "`${`${`x`}`}`",
    "module.exports.f = (a) => a;", "const z = require(\"@anthropic-ai/sdk\");", "}}{{((",
    "x ??= y; x ||= z; x &&= w;", "try { } catch { } finally { }", "/re[g]ex/.test(s);",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SCRIPT_PIECES), min_size=1, max_size=12),
       st.sampled_from(["a.ts", "b.tsx", "c.js", "d.mjs"]))
def test_generated_scripts_never_crash_the_front_end(pieces: list[str], name: str) -> None:
    text = "\n".join(pieces)
    source = SourceFile(Path(name), name, text, text.encode())
    try:
        facts = build_script_facts(source, force=True)
    except ParseError:
        return
    if facts.analyzed:
        Analysis([facts], Config()).run()


def test_a_nan_check_validates_a_parsed_score(tmp_path: Path) -> None:
    code = """import OpenAI from "openai";
const openai = new OpenAI();
export async function conciseness(output: string) {
  const response = await openai.chat.completions.create({ model: "gpt-4o", messages: [
    { role: "user", content: `Rate the text from 0 to 10 for conciseness.\\n${output}` }] });
  const score = parseFloat(response.choices[0]?.message?.content?.trim() || "0");
  return CHECK;
}
"""
    write_files(tmp_path, {"q.ts": code.replace("CHECK", "isNaN(score) ? 5 : score")})
    assert _codes(lint_tree(tmp_path, {"EL504"})) == []
    write_files(tmp_path, {"q.ts": code.replace("CHECK", "score")})
    assert _codes(lint_tree(tmp_path, {"EL504"})) == [("EL504", "q.ts", 6)]


def test_a_judge_nested_in_a_setup_function_reads_its_model_and_template(
        tmp_path: Path) -> None:
    """A closure: the nested judge uses the enclosing function's chat model and prompt."""
    code = """import { ChatAnthropic } from "@langchain/anthropic";
import { ChatPromptTemplate } from "@langchain/core/prompts";

export async function runSuite(cases: { q: string }[]) {
  const claude = new ChatAnthropic({ model: "claude-sonnet-4-5" });
  const marking = ChatPromptTemplate.fromMessages([
    ["system", "You are a strict grader. Score the answer from 1 to 10."],
    ["human", "Question: {q}\\n<answer>{a}</answer>"],
  ]);
  const mark = async (q: string, a: string) =>
    marking.pipe(claude).invoke({ q, a });
  for (const c of cases) {
    const reply = await claude.invoke(c.q);
    console.log(await mark(c.q, String(reply.content)));
  }
}
"""
    write_files(tmp_path, {"suite/run.ts": code})
    result = lint_tree(tmp_path, {"EL301"})
    assert _codes(result) == [("EL301", "suite/run.ts", 11)]
    assert result.findings[0].severity.value == "error"


def test_a_graph_node_in_a_file_without_llm_words_runs_an_imported_model(
        tmp_path: Path) -> None:
    """The node's file names no SDK: it is parsed because it imports a chat model (a default
    export of a bound model), and the graph reads its node function from it."""
    files = {
        "bot/llms/drafter.ts": """import { ChatOpenAI } from "@langchain/openai";
import { lookup } from "../tools";

const drafter = new ChatOpenAI({ model: "gpt-4o-mini" }).bindTools([lookup]);
export default drafter;
""",
        "bot/llms/checker.ts": """import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";

export const checker = new ChatOpenAI({ model: "gpt-4o-mini" }).withStructuredOutput(
  z.object({ done: z.boolean(), notes: z.string() }));
""",
        "bot/tools.ts": "export const lookup = { name: 'lookup' };\n",
        "bot/steps/draft.ts": """import drafter from "../llms/drafter";

export async function draftStep(state: { messages: string[] }) {
  const reply = await drafter.invoke(state.messages);
  return { messages: [reply] };
}
""",
        "bot/steps/check.ts": """import { checker } from "../llms/checker";

export async function checkStep(state: { messages: { content: string }[] }) {
  const last = state.messages[state.messages.length - 1].content;
  const verdict = await checker.invoke(
    `You are a strict judge. Decide whether the reply is complete.\\n<reply>${last}</reply>`);
  return { done: verdict.done, notes: verdict.notes };
}
""",
        "bot/graph.ts": """import { StateGraph, START, END } from "@langchain/langgraph";
import { draftStep } from "./steps/draft";
import { checkStep } from "./steps/check";

const next = (s: { done: boolean }) => (s.done ? END : "draft");

export const app = new StateGraph({ channels: {} })
  .addNode("draft", draftStep)
  .addNode("check", checkStep)
  .addEdge(START, "draft")
  .addEdge("draft", "check")
  .addConditionalEdges("check", next)
  .compile();
""",
    }
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, {"EL301", "EL501"})
    assert ("EL301", "bot/steps/check.ts", 5) in _codes(result)
    assert ("EL501", "bot/graph.ts", 12) in _codes(result)  # at `.addConditionalEdges(`


def test_callbacks_in_a_method_use_the_instance_field_model(tmp_path: Path) -> None:
    """An instance field made by a call is set by the constructor; arrow functions defined
    in a method close over ``this``."""
    code = """import { ChatMistralAI } from "@langchain/mistralai";

export class EssayCoach {
  private llm = new ChatMistralAI({ model: "mistral-large-latest" });

  async coach(topic: string) {
    const write = async (t: string) => (await this.llm.invoke(`Write an essay on ${t}`)).content;
    const mark = async (essay: string) =>
      (await this.llm.invoke(
      `You are a strict grader. Score the essay from 1 to 10.\\n<essay>${essay}</essay>`)).content;
    return mark(String(await write(topic)));
  }
}
"""
    write_files(tmp_path, {"coach.ts": code})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "coach.ts", 9)]


def test_the_judge_node_reads_the_history_through_a_formatter_of_another_module(
        tmp_path: Path) -> None:
    """The helper module has no LLM content: what its function returns is made of what it
    is given (the history); the generator node copies the history to a local first."""
    files = {
        "desk/util/transcript.ts": """type Item = { role: string; text: string };
export function asTranscript(items: Item[]) {
  return items.map((m) => `${m.role}: ${m.text}`).join("\\n");
}
""",
        "desk/llm.ts": """import { ChatOpenAI } from "@langchain/openai";
export const agentModel = new ChatOpenAI({ model: "gpt-4.1-mini" });
export const reviewModel = new ChatOpenAI({ model: "gpt-4.1" });
""",
        "desk/nodes.ts": """import { agentModel, reviewModel } from "./llm";
import { asTranscript } from "./util/transcript";

export async function agentNode(state: { messages: any[] }) {
  const history = state.messages;
  const out = await agentModel.invoke(history);
  return { messages: [out] };
}

export async function reviewNode(state: { messages: any[] }) {
  const ask = `You are a strict reviewer. Reply PASS or FAIL.\\n${asTranscript(state.messages)}`;
  const verdict = await reviewModel.invoke(ask);
  return { done: String(verdict.content).includes("PASS") };
}
""",
        "desk/graph.ts": """import { StateGraph, START, END } from "@langchain/langgraph";
import { agentNode, reviewNode } from "./nodes";

export const desk = new StateGraph({ channels: {} })
  .addNode("agent", agentNode)
  .addNode("review", reviewNode)
  .addEdge(START, "agent")
  .addEdge("agent", "review")
  .addConditionalEdges("review", (s: { done: boolean }) => (s.done ? END : "agent"))
  .compile();
""",
    }
    write_files(tmp_path, files)
    assert ("EL202", "desk/nodes.ts", 12) in _codes(lint_tree(tmp_path, {"EL202"}))


def test_a_judge_node_that_returns_its_parsed_reply_as_the_update(tmp_path: Path) -> None:
    """``return JSON.parse(reply)``: the node writes the judge's own keys, so a router on
    ``state.rating`` reads the judge (no attempt bound)."""
    code = """import { StateGraph } from "@langchain/langgraph";
import { ChatGroq } from "@langchain/groq";

const author = new ChatGroq({ model: "llama-3.3-70b-versatile" });
const reviewer = new ChatGroq({ model: "llama-3.1-8b-instant" });

const compose = async (s: { topic: string; text?: string }) => {
  const out = await author.invoke(`Write a blog post on ${s.topic}. Last version: ${s.text ?? ""}`);
  return { text: out.content };
};
const review = async (s: { text: string }) => {
  const out = await reviewer.invoke(
    `You are a strict reviewer. Rate the post 0-100 as JSON {"rating": n}.\\n${s.text}`);
  return JSON.parse(out.content as string);
};
const next = (s: { rating: number }) => (s.rating >= 85 ? "__end__" : "compose");

export const blog = new StateGraph({ channels: {} })
  .addNode("compose", compose)
  .addNode("review", review)
  .addEdge("__start__", "compose")
  .addEdge("compose", "review")
  .addConditionalEdges("review", next)
  .compile();
"""
    write_files(tmp_path, {"blog.ts": code})
    assert ("EL501", "blog.ts", 23) in _codes(lint_tree(tmp_path, {"EL501"}))


def test_a_test_assertion_on_the_parsed_score_is_a_check(tmp_path: Path) -> None:
    """``expect(v.score).toBeLessThanOrEqual(10)`` is ``assert v.score <= 10`` (the table's
    ``assertions``): what was parsed is checked, no EL504."""
    code = """import Anthropic from "@anthropic-ai/sdk";
const claude = new Anthropic();

export async function grade(essay: string) {
  const res = await claude.messages.create({
    model: "claude-haiku-4-5", max_tokens: 50,
    system: "You are a strict grader. Score the essay from 1 to 10 as JSON {\\"score\\": n}.",
    messages: [{ role: "user", content: `<essay>${essay}</essay>` }],
  });
  const block = res.content[0];
  const verdict = JSON.parse(block.type === "text" ? block.text : "{}");
  %s
  return verdict.score;
}
"""
    checked = code % "expect(verdict.score).toBeLessThanOrEqual(10);"
    write_files(tmp_path / "a", {"grade.test.ts": checked})
    assert _codes(lint_tree(tmp_path / "a", {"EL504"})) == []
    write_files(tmp_path / "b", {"grade.test.ts": code % "console.log(verdict);"})
    assert _codes(lint_tree(tmp_path / "b", {"EL504"})) == [("EL504", "grade.test.ts", 11)]


def test_a_cap_kept_by_the_review_node_on_the_writer_nodes_counter_bounds_the_cycle(
        tmp_path: Path) -> None:
    """The writer node counts rounds, the review node approves past the cap, the router
    reads only the approval: bounded (EL501 says a counter a node keeps is a bound)."""
    code = """import { StateGraph, START, END } from "@langchain/langgraph";
import { ChatOllama } from "@langchain/ollama";

const llm = new ChatOllama({ model: "llama3.1" });
const MAX = 3;

const writeNode = async (s: { round: number; text: string }) => {
  const out = await llm.invoke(`Write a cover letter. Last version: ${s.text}`);
  return { text: String(out.content), round: s.round + 1 };
};
const reviewNode = async (s: { round: number; text: string }) => {
  %s
  const out = await llm.invoke(`You are a strict reviewer. Reply APPROVE or list fixes: ${s.text}`);
  return { approved: String(out.content).includes("APPROVE") };
};

export const letters = new StateGraph({ channels: {} })
  .addNode("write", writeNode)
  .addNode("review", reviewNode)
  .addEdge(START, "write")
  .addEdge("write", "review")
  .addConditionalEdges("review", (s: { approved: boolean }) => (s.approved ? END : "write"))
  .compile();
"""
    capped = code % "if (s.round >= MAX) return { approved: true };"
    write_files(tmp_path / "a", {"letters.ts": capped})
    assert _codes(lint_tree(tmp_path / "a", {"EL501"})) == []
    write_files(tmp_path / "b", {"letters.ts": code % ""})
    assert _codes(lint_tree(tmp_path / "b", {"EL501"})) == [("EL501", "letters.ts", 22)]


def test_agents_run_through_a_helper_that_takes_the_agent(tmp_path: Path) -> None:
    """``ask(agent, prompt)`` runs the agent it is given: each call is that agent's run, with
    its instructions and model."""
    code = """import { Agent } from "@mastra/core/agent";

const poet = new Agent({ name: "poet", instructions: "Write a haiku.", model: "openai/gpt-4.1" });
const critic = new Agent({
  name: "critic",
  instructions: "You are a strict critic. Score the haiku from 1 to 10 and reply with the number.",
  model: "openai/gpt-4.1",
});

async function ask(who: Agent, text: string) {
  return (await who.generate(text)).text;
}

export async function haiku(topic: string) {
  const poem = await ask(poet, `Topic: ${topic}`);
  const mark = await ask(critic, `<haiku>${poem}</haiku>`);
  return { poem, mark };
}
"""
    write_files(tmp_path, {"haiku.ts": code})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "haiku.ts", 16)]


def test_a_nested_function_runs_the_model_its_enclosing_function_is_given(
        tmp_path: Path) -> None:
    """``const run = async () => create({model})`` inside ``judge(answer, model)``: the model
    is the enclosing function's parameter, so its callers say which it is."""
    code = """import OpenAI from "openai";
const client = new OpenAI();

async function answer(q: string, model: string) {
  const msg = [{ role: "user", content: q }];
  const c = await client.chat.completions.create({ model, messages: msg });
  return c.choices[0].message.content ?? "";
}

async function judge(q: string, reply: string, model: string) {
  const once = async () => {
    const c = await client.chat.completions.create({ model, messages: [{ role: "user",
      content: `You are an impartial judge. Score the reply 0-10: ${q} <r>${reply}</r>` }] });
    return c.choices[0].message.content ?? "";
  };
  return once();
}

export async function POST(body: { q: string; model: string }) {
  const a = await answer(body.q, body.model);
  return judge(body.q, a, body.model);
}
"""
    write_files(tmp_path, {"route.ts": code})
    assert _codes(lint_tree(tmp_path, {"EL301"})) == [("EL301", "route.ts", 21)]


def test_a_fetch_responses_ok_is_no_verdict(tmp_path: Path) -> None:
    """``if (!res.ok) throw ...`` tests the HTTP exchange: it makes no judge of the call."""
    code = """export async function describe(topic: string) {
  const first = await fetch("https://api.openai.com/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: topic }] }),
  });
  const outline = (await first.json()).choices[0].message.content as string;
  const second = await fetch("https://api.openai.com/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: outline }] }),
  });
  if (!second.ok) throw new Error(`HTTP ${second.status}`);
  return (await second.json()).choices[0].message.content as string;
}
"""
    write_files(tmp_path, {"talk.ts": code})
    assert _codes(lint_tree(tmp_path, {"EL301", "EL201"})) == []
