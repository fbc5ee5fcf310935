"""A call run on each model of a list in turn (an arena's contestants, a grid of judges): its
model is the set of them, and a judge whose model is among the contestants grades its own
model's work (EL301). A set has no one cost tier (no EL302)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint import models
from tests.conftest import lint_tree, write_files

ROUND_ROBIN = """\
import anthropic

api = anthropic.Anthropic()
PLAYERS = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
REFEREE = "@JUDGE@"


def play(riddle):
    marks = []
    for who in PLAYERS:
        guess = api.messages.create(model=who, max_tokens=200,
                                    messages=[{"role": "user", "content": riddle}])
        said = guess.content[0].text
        mark = api.messages.create(
            model=REFEREE, max_tokens=5,
            messages=[{"role": "user",
                       "content": f"Score this solution from 1 to 10.\\n<s>{said}</s>"}])
        marks.append((who, mark.content[0].text))
    return marks
"""


@pytest.mark.parametrize(("referee", "codes"), [
    ("claude-opus-4-1", {("EL301", 14)}),
    ("gpt-4.1", set()),  # not a contestant, and a set has no tier to compare with
])
def test_a_judge_among_the_contestants_grades_its_own_model(tmp_path: Path, referee: str,
                                                            codes: set[tuple[str, int]]) -> None:
    write_files(tmp_path, {"bench/riddles.py": ROUND_ROBIN.replace("@JUDGE@", referee)})
    result = lint_tree(tmp_path, {"EL301", "EL302"})
    assert {(f.code, f.line) for f in result.findings} == codes
    for f in result.findings:
        assert "each of several models" in f.message and "claude-opus-4-1" in f.message


LOCAL_LIST_TS = """\
import OpenAI from "openai";

const oa = new OpenAI();

export async function bakeOff(recipeAsk: string) {
  const entrants = ["gpt-4o-mini", "gpt-4.1"];
  const board: string[] = [];
  for (const e of entrants) {
    const r = await oa.chat.completions.create({ model: e,
      messages: [{ role: "user", content: recipeAsk }] });
    const v = await oa.chat.completions.create({ model: "gpt-4.1",
      messages: [{ role: "system", content: "You are a strict judge of recipes." },
                 { role: "user", content: `<recipe>${r.choices[0].message.content}</recipe>` }] });
    board.push(v.choices[0].message.content ?? "");
  }
  return board;
}
"""


def test_a_local_list_of_contestants_in_a_script(tmp_path: Path) -> None:
    write_files(tmp_path, {"src/bakeoff.ts": LOCAL_LIST_TS})
    result = lint_tree(tmp_path, {"EL301"})
    assert [(f.code, f.line) for f in result.findings] == [("EL301", 11)]


ONE_VARIABLE = """\
from openai import OpenAI

c = OpenAI()


def sweep(prompts, lineup):
    for m in lineup:
        for p in prompts:
            a = c.chat.completions.create(model=m, messages=[{"role": "user", "content": p}])
            j = c.chat.completions.create(
                model=m, messages=[{"role": "system", "content": "You are a strict grader."},
                                   {"role": "user", "content": a.choices[0].message.content}])
            print(j.choices[0].message.content)
"""


def test_a_loop_over_a_parameter_is_still_one_variable(tmp_path: Path) -> None:
    """Nothing names the models of ``lineup``: both calls read the same loop variable."""
    write_files(tmp_path, {"sweep.py": ONE_VARIABLE})
    result = lint_tree(tmp_path, {"EL301"})
    assert [(f.code, f.line) for f in result.findings] == [("EL301", 10)]


def test_sets_meet_or_not() -> None:
    arena = models.model_set(["gpt-4o", "openai/gpt-4.1-mini", "gpt-4o"])
    assert arena == "one of: gpt-4o, openai/gpt-4.1-mini"
    assert models.same_model("gpt-4.1-mini", arena)
    assert models.same_model(arena, "openai:gpt-4o")
    assert not models.same_model(arena, "gpt-4.1")
    assert models.same_model(arena, models.model_set(["o4-mini", "gpt-4.1-mini"]) or "")
    assert models.is_cheaper("gpt-4o-mini", arena) is None
    assert models.model_set(["o3"]) == "o3"
