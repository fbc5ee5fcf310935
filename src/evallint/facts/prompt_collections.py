"""Facts of prompt collections: JSON and JSONL files of prompt records."""

from __future__ import annotations

from dataclasses import dataclass, field

from evallint.facts import FileFacts, Pos
from evallint.facts.prompt_files import PromptFileFacts


@dataclass
class CollectionRecord:
    """One prompt record: its name, where it starts, its model and its template fields."""

    name: str
    pos: Pos
    prompts: list[PromptFileFacts] = field(default_factory=list)
    model: str | None = None
    model_pos: Pos | None = None


@dataclass
class CollectionFacts(FileFacts):
    records: list[CollectionRecord] = field(default_factory=list)
