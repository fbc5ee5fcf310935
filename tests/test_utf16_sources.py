"""Files saved as UTF-16 with a byte-order mark (Windows editors write them): text, not binary
(every other byte of ASCII is NUL). They are decoded and analysed (a script, a template: a kind
told by the file's name); positions are the text's; a fix never rewrites one (it would change
the encoding as well)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.discovery import FileTask
from evallint.fixes.runner import Texts
from evallint.source import SourceError, decode, read_source
from tests.conftest import lint_tree

JUDGE_TS = """\
import OpenAI from "openai";
const llm = new OpenAI();

export async function scoreReply(reply: string) {
  const r = await llm.chat.completions.create({ model: "gpt-4o", messages: [
    { role: "system", content: "You are a strict grader. Score the reply from 1 to 10." },
    { role: "user", content: `<reply>${reply}</reply>` }] });
  return JSON.parse(r.choices[0].message.content ?? "{}").score;
}
"""


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf16_file_decodes_to_its_text(tmp_path: Path, codec: str) -> None:
    bom = b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff"
    path = tmp_path / "judge.ts"
    path.write_bytes(bom + JUDGE_TS.encode(codec))
    src = read_source(path, "judge.ts")
    assert src.text == JUDGE_TS
    assert src.data == JUDGE_TS.encode("utf-8")  # what the parsers read


def test_a_broken_utf16_file_is_named_not_called_binary() -> None:
    with pytest.raises(SourceError, match="not valid UTF-16"):
        decode(b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    with pytest.raises(SourceError, match="binary file"):
        decode(b"\x7fELF\x00\x00\x01")


def test_a_utf16_script_is_analysed_like_its_utf8_twin(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "judge.ts").write_text(JUDGE_TS, encoding="utf-8")
    (tmp_path / "b" / "judge.ts").write_bytes(b"\xff\xfe" + JUDGE_TS.encode("utf-16-le"))
    result = lint_tree(tmp_path)
    by_dir: dict[str, list[tuple[str, int, int]]] = {"a": [], "b": []}
    for f in result.findings:
        by_dir[f.path.split("/")[0]].append((f.code, f.line, f.column))
    assert by_dir["a"] and by_dir["a"] == by_dir["b"]
    assert not [f for f in result.findings if f.code == "EL901"]



def test_a_fix_never_reads_a_utf16_file_for_rewriting(tmp_path: Path) -> None:
    wide, plain = tmp_path / "judge.ts", tmp_path / "twin.ts"
    wide.write_bytes(b"\xff\xfe" + JUDGE_TS.encode("utf-16-le"))
    plain.write_text(JUDGE_TS, encoding="utf-8")
    texts = Texts({p.name: FileTask(p.name, str(p), "typescript") for p in (wide, plain)},
                  1 << 20)
    assert texts.get("judge.ts") is None  # (a fix writes UTF-8: the encoding would change)
    assert texts.get("twin.ts") == JUDGE_TS
