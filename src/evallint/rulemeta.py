"""Rule metadata: what ``rules/*.yaml`` (and policy packs) say about each rule.

Kept apart from :mod:`evallint.registry` (where checks bind to ids) so that the config and
policy layers can read rule metadata without importing the check machinery.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evallint.findings import Severity


class RuleDataError(Exception):
    """A broken rule file shipped with evallint or given as a policy pack."""


@dataclass(frozen=True)
class RuleMeta:
    """Everything the docs, SARIF and the test suite know about one rule."""

    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fix: str
    invariant: str = ""
    default: bool = True
    params: dict[str, Any] = field(default_factory=dict)
    tests: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    fixable: str = ""  # "safe" (applied by --fix), "unsafe" (needs --unsafe-fixes) or ""
    autofix: str = ""  # what the fix does, one or two sentences

    def doc(self) -> str:
        """The rule's documentation as ``evallint rule`` prints it."""
        parts = [f"{self.code} ({self.name})", ""]
        if self.invariant:
            parts.append(f"Invariant: {self.invariant}")
        parts.append(f"Default severity: {self.severity.value}")
        if self.fixable:
            parts.append(f"Fix available ({self.fixable_label}): {self.autofix.strip()}")
        parts += ["", "## What it does", self.what.strip(), "", "## Why is this bad",
                  self.why.strip(), "", "## Example", _indent(self.example), "",
                  "## Use instead", _indent(self.fix)]
        return "\n".join(parts).rstrip() + "\n"


    @property
    def fixable_label(self) -> str:
        """How the fix is applied, in the words of the CLI options."""
        return {"safe": "safe, applied by --fix",
                "unsafe": "unsafe, applied by --fix --unsafe-fixes"}.get(self.fixable, "")


def _indent(text: str) -> str:
    return "\n".join(("    " + ln) if ln.strip() else "" for ln in text.strip("\n").splitlines())


def rules_dir() -> Path:
    """Where the shipped rule YAML lives: inside the wheel, or ``rules/`` of a checkout."""
    packaged = Path(__file__).resolve().parent / "_rules"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "rules"
    if checkout.is_dir():
        return checkout
    raise RuleDataError("rule data not found: the installation is incomplete (no _rules/)")


DISTRIBUTION = "evallint-policy"  # the name evallint is installed under
RULES_PAGE = "rules.md"  # docs/rules.md of a checkout; evallint/_docs/rules.md in the wheel


@lru_cache(maxsize=1)
def docs_page() -> Path | None:
    """The rule reference shipped with evallint: inside the wheel, or docs/rules.md of a
    checkout (an editable install); None when neither is there."""
    here = Path(__file__).resolve().parent
    for page in (here / "_docs" / RULES_PAGE, here.parents[1] / "docs" / RULES_PAGE):
        if page.is_file():
            return page
    return None


@lru_cache(maxsize=1)
def documentation_url() -> str | None:
    """The documentation URL the installed distribution declares (``[project.urls]``
    "Documentation", or "Docs"), read from its metadata; None without one."""
    from importlib import metadata

    try:
        entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    for entry in entries:
        label, _, url = str(entry).partition(",")
        if "".join(ch for ch in label.lower() if ch.isalnum()) in ("documentation", "docs") \
                and url.strip():
            return url.strip()
    return None


def rule_doc_url(code: str, template: str | None = None) -> str | None:
    """Where the documentation of the shipped rule ``code`` is, however evallint was installed.

    ``template`` (an editor's ``ruleDocs``) comes first, with ``{code}`` (``EL102``) and
    ``{anchor}`` (``el102``) filled in. Then the distribution's "Documentation" URL: a template
    likewise when it holds either; a page of its own when its path ends in ``.md`` or ``.html``
    (the rules page: the rule's anchor is added); else the folder that holds ``rules.md``. Then
    the rules page shipped with evallint, as a ``file://`` URI with the rule's anchor. None for
    a code that is not a shipped rule (a policy pack's) or when no page is found."""
    if code not in load_rules():
        return None
    anchor = code.lower()
    if template:
        return template.replace("{code}", code).replace("{anchor}", anchor)
    base = documentation_url()
    if base:
        if "{code}" in base or "{anchor}" in base:
            return base.replace("{code}", code).replace("{anchor}", anchor)
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(base)
        path = parts.path
        if not path.rsplit("/", 1)[-1].lower().endswith((".md", ".html", ".htm")):
            path = path.rstrip("/") + "/" + RULES_PAGE
        return urlunsplit(parts._replace(path=path, fragment=anchor))
    shipped = docs_page()
    return f"{shipped.as_uri()}#{anchor}" if shipped is not None else None


_REQUIRED = ("code", "name", "severity", "summary", "what", "why", "example", "fix")


def parse_rule(data: Any, source: str) -> RuleMeta:
    """Validate one rule document."""
    if not isinstance(data, dict):
        raise RuleDataError(f"{source}: a rule must be a mapping")
    missing = [k for k in _REQUIRED if not data.get(k)]
    if missing:
        raise RuleDataError(f"{source}: missing {', '.join(missing)}")
    try:
        severity = Severity(data["severity"])
    except ValueError:
        raise RuleDataError(f"{source}: severity must be error, warning or note") from None
    fixable = str(data.get("fixable") or "")
    if fixable not in ("", "safe", "unsafe"):
        raise RuleDataError(f"{source}: fixable must be safe or unsafe")
    return RuleMeta(
        code=str(data["code"]), name=str(data["name"]), severity=severity,
        summary=str(data["summary"]).strip(), what=str(data["what"]), why=str(data["why"]),
        example=str(data["example"]), fix=str(data["fix"]),
        invariant=str(data.get("invariant", "")), default=bool(data.get("default", True)),
        params=dict(data.get("params") or {}), tests=dict(data.get("tests") or {}),
        source=source, fixable=fixable, autofix=str(data.get("autofix") or ""),
    )


# The shipped rule files are ours: libyaml's safe loader reads them ten times faster than the
# pure-Python one. Even so, building the documents is a third of a one-file run's start-up, so
# the documents also ship precompiled as JSON (:data:`COMPILED`), used while its digest matches
# (and then ``yaml`` is not even imported).

COMPILED = "rules.compiled.json"  # beside the rule files; ``python -m evallint.rulemeta``
DATA_COMPILED = "data.compiled.json"  # the vocabularies of rules/data, likewise


def _sources(folder: Path) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(folder.glob("*.yaml"))]


def _digest(sources: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in sources:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _documents(sources: list[tuple[str, bytes]]) -> dict[str, Any]:
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs: dict[str, Any] = {}
    for name, data in sources:
        try:
            docs[name] = yaml.load(data.decode("utf-8"), Loader=loader)
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise RuleDataError(f"{name}: invalid YAML: {exc}") from None
    return docs


def _compiled(folder: Path, digest: str, name: str = COMPILED) -> dict[str, Any] | None:
    """The precompiled documents, or None when missing, unreadable or made from other files
    (a rule file edited since: the YAML is then read, so a stale copy never decides)."""
    try:
        data = json.loads((folder / name).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("digest") != digest or \
            not isinstance(data.get("rules"), dict):
        return None
    return data["rules"]


def compile_rules(folder: Path | None = None) -> str:
    """The text of :data:`COMPILED` for the rule files in ``folder``; refuses a document that
    JSON cannot carry unchanged (a date, a non-string key)."""
    folder = folder or rules_dir()
    sources = _sources(folder)
    docs = _documents(sources)
    for name, doc in docs.items():
        if json.loads(json.dumps(doc)) != doc:
            raise RuleDataError(f"{name}: holds a value JSON cannot carry unchanged")
    return json.dumps({"digest": _digest(sources), "rules": docs}, indent=None,
                      sort_keys=True, ensure_ascii=False) + "\n"


def _compiled_docs(folder: Path, name: str = COMPILED) -> dict[str, Any]:
    """The documents of the YAML files in ``folder``: precompiled while fresh, else read."""
    sources = _sources(folder)
    docs = _compiled(folder, _digest(sources), name)
    return docs if docs is not None else _documents(sources)


@lru_cache(maxsize=1)
def load_rules() -> dict[str, RuleMeta]:
    """All shipped rules by code, loaded once per process."""
    docs = _compiled_docs(rules_dir())
    metas: dict[str, RuleMeta] = {}
    for name in sorted(docs):
        meta = parse_rule(docs[name], name)
        if meta.code in metas:
            raise RuleDataError(f"{name}: duplicate rule code {meta.code}")
        metas[meta.code] = meta
    return metas


if __name__ == "__main__":  # regenerate the precompiled rules and catalogue after an edit
    (rules_dir() / COMPILED).write_text(compile_rules(), encoding="utf-8")
    (rules_dir() / "models" / "models.compiled.json").write_text(
        compile_rules(rules_dir() / "models"), encoding="utf-8")
    (rules_dir() / "data" / DATA_COMPILED).write_text(
        compile_rules(rules_dir() / "data"), encoding="utf-8")
