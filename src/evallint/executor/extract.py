"""Cut the final answer out of a generator reply, so no reasoning ever reaches the evaluator.

Thinking blocks are dropped by type; reasoning written inline as ``<thinking>`` (or the other
configured tags) is removed, including an unclosed tag, which hides everything after it. An
``<answer>`` element wins when present; a configured regex wins over everything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from evallint.executor.spec import Extraction

_DROPPED_BLOCKS = {"thinking", "redacted_thinking"}


@dataclass(frozen=True)
class Extracted:
    answer: str
    how: str  # text | answer_tag | pattern | pattern_miss
    dropped_thinking_blocks: int


def reply_text(blocks: Iterable[Any]) -> tuple[str, int]:
    """The text blocks of a reply joined, and how many thinking blocks were dropped."""
    texts: list[str] = []
    dropped = 0
    for block in blocks:
        kind = getattr(block, "type", None) if not isinstance(block, dict) else block.get("type")
        if kind in _DROPPED_BLOCKS:
            dropped += 1
            continue
        if kind == "text":
            text = getattr(block, "text", None) if not isinstance(block, dict) else block.get(
                "text")
            texts.append(str(text or ""))
    return "".join(texts), dropped


@lru_cache(maxsize=32)
def _tag_patterns(tags: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    if not tags:
        return None
    alt = "|".join(re.escape(t) for t in tags)
    closed = re.compile(rf"<({alt})\b[^>]*>.*?</\1\s*>", re.S | re.I)
    unclosed = re.compile(rf"<(?:{alt})\b[^>]*>.*\Z", re.S | re.I)
    return closed, unclosed


def strip_reasoning(text: str, tags: tuple[str, ...]) -> str:
    pats = _tag_patterns(tags)
    if pats is None:
        return text
    closed, unclosed = pats
    text = closed.sub("", text)
    return unclosed.sub("", text)


def extract_answer(blocks: Iterable[Any], rules: Extraction) -> Extracted:
    text, dropped = reply_text(blocks)
    text = strip_reasoning(text, rules.strip_tags)
    if rules.pattern:
        m = re.search(rules.pattern, text, re.S)
        if m:
            group = m.groupdict().get("answer")
            value = group if group is not None else (m.group(1) if m.groups() else m.group(0))
            return Extracted((value or "").strip(), "pattern", dropped)
        return Extracted(text.strip(), "pattern_miss", dropped)
    if rules.answer_tag:
        tag = re.escape(rules.answer_tag)
        found = re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}\s*>", text, re.S | re.I)
        if found:
            return Extracted(found[-1].strip(), "answer_tag", dropped)
    return Extracted(text.strip(), "text", dropped)
