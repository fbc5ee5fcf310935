"""Loop specs: evallint's own (``*.loop.yaml``), aiwg ``pipeline.config.yaml`` (``eval_config``)
and optimisation specs with a ``metric.judge`` block.

The three dialects name the same things in different places; :class:`LoopSpecFacts` keeps the
positioned document and offers one reading of it (roles, prompts, rubrics, limits) so each rule
stays a few lines long.
"""

from __future__ import annotations

from evallint.config import Config
from evallint.facts.loopspec import (
    LoopSpecFacts,
)
from evallint.frontend import frontend
from evallint.kinds import FileKind
from evallint.marks import load_yaml
from evallint.source import SourceFile


@frontend(FileKind.LOOP_SPEC)
def parse_loop_spec(source: SourceFile, config: Config) -> LoopSpecFacts:
    """The positioned document; invalid YAML raises ParseError (EL901)."""
    doc = load_yaml(source.text)
    return LoopSpecFacts(path=source.rel, kind=FileKind.LOOP_SPEC.value, doc=doc)
