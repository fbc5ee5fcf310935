"""Each rule links to its documentation however evallint was installed: the editor server's
diagnostics (``codeDescription.href``) and SARIF's ``helpUri`` both come from
:func:`evallint.rulemeta.rule_doc_url`.

The distribution's "Documentation" URL is tested with stubbed metadata (the project declares
none yet); the rules page shipped in the wheel is tested on a wheel built from this checkout and
installed into a fresh virtual environment (about 5 s).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from evallint import rulemeta
from evallint.registry import load_rules
from evallint.rulemeta import rule_doc_url

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh_lookups() -> Iterator[None]:
    rulemeta.documentation_url.cache_clear()
    rulemeta.docs_page.cache_clear()
    yield
    rulemeta.documentation_url.cache_clear()
    rulemeta.docs_page.cache_clear()


def _stub_metadata(monkeypatch: pytest.MonkeyPatch, *urls: str) -> None:
    """The installed distribution's metadata, with these ``Project-URL`` entries."""
    real = importlib.metadata.metadata

    def metadata(name: str) -> Message:
        if name != rulemeta.DISTRIBUTION:
            return real(name)
        message = Message()
        message["Name"] = name
        for url in urls:
            message["Project-URL"] = url
        return message

    monkeypatch.setattr(importlib.metadata, "metadata", metadata)


def _anchored_page(url: str) -> tuple[Path, str]:
    """The file a ``file://`` URL names (it must exist) and its fragment."""
    parts = urlsplit(url)
    assert parts.scheme == "file", url
    path = Path(unquote(parts.path))
    assert path.is_file(), url
    return path, parts.fragment


def _has_anchor(page: Path, anchor: str) -> bool:
    """A heading whose slug (as markdown renderers make it) is ``anchor``."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return anchor in {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-")
                      for h in headings}


def test_without_a_documentation_url_the_shipped_page_is_linked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stub_metadata(monkeypatch, "Homepage, https://example.org/evallint")
    page, anchor = _anchored_page(rule_doc_url("EL102") or "")
    assert anchor == "el102" and _has_anchor(page, anchor)
    assert page.name == "rules.md"
    for code in load_rules():
        assert _has_anchor(page, _anchored_page(rule_doc_url(code) or "")[1]), code


def test_an_uninstalled_checkout_links_the_shipped_page(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Message:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "metadata", missing)
    page, anchor = _anchored_page(rule_doc_url("EL904") or "")
    assert anchor == "el904" and _has_anchor(page, anchor)


@pytest.mark.parametrize(("declared", "expected"), [
    ("Documentation, https://docs.example.org/evallint/",
     "https://docs.example.org/evallint/rules.md#el102"),
    ("Documentation, https://docs.example.org/evallint",
     "https://docs.example.org/evallint/rules.md#el102"),
    ("documentation, https://example.org/docs/rules.html#top",
     "https://example.org/docs/rules.html#el102"),
    ("Docs, https://example.org/rules/{anchor}", "https://example.org/rules/el102"),
    ("Documentation, https://example.org/r?rule={code}", "https://example.org/r?rule=EL102"),
])
def test_the_distributions_documentation_url_wins_over_the_shipped_page(
        monkeypatch: pytest.MonkeyPatch, declared: str, expected: str) -> None:
    _stub_metadata(monkeypatch, "Homepage, https://example.org/home", declared)
    assert rule_doc_url("EL102") == expected


def test_a_policy_packs_rule_has_no_link(monkeypatch: pytest.MonkeyPatch) -> None:
    _stub_metadata(monkeypatch, "Documentation, https://docs.example.org/")
    assert rule_doc_url("ACME001") is None
    assert rule_doc_url("ACME001", "https://x/{code}") is None


def test_sarif_rules_carry_the_same_link(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from evallint.report.sarif import _rule

    meta = load_rules()["EL102"]
    page, anchor = _anchored_page(_rule(meta)["helpUri"])
    assert anchor == "el102" and _has_anchor(page, anchor)
    assert "helpUri" not in _rule(replace(meta, code="ACME001"))
    _stub_metadata(monkeypatch, "Documentation, https://docs.example.org/evallint/")
    rulemeta.documentation_url.cache_clear()
    assert _rule(meta)["helpUri"] == "https://docs.example.org/evallint/rules.md#el102"


def test_the_editor_servers_link_and_the_clients_rule_docs_option(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygls")
    from evallint.server.lsp import EvallintServer

    server = EvallintServer()
    assert server.rule_url("EL102") == rule_doc_url("EL102")
    _stub_metadata(monkeypatch, "Documentation, https://docs.example.org/evallint/")
    rulemeta.documentation_url.cache_clear()
    assert server.rule_url("EL102") == "https://docs.example.org/evallint/rules.md#el102"
    server.doc_url = "https://wiki.example.org/lint/{code}#{anchor}"
    assert server.rule_url("EL102") == "https://wiki.example.org/lint/EL102#el102"
    assert server.rule_url("ACME001") is None


# ------------------------------------------------------------------ from a wheel

PROBE = textwrap.dedent("""\
    import json, sys
    import evallint
    from evallint.registry import load_rules
    from evallint.report.sarif import _rule
    from evallint.rulemeta import rule_doc_url
    from evallint.server.lsp import EvallintServer

    server = EvallintServer()
    print(json.dumps({
        "package": evallint.__file__,
        "url": rule_doc_url("EL102"),
        "sarif": _rule(load_rules()["EL102"])["helpUri"],
        "server": server.rule_url("EL102"),
    }))
    """)


def _build_wheel(out: Path) -> Path:
    """A wheel of this checkout, built by its backend (hatchling) as pip builds it."""
    try:
        import hatchling  # noqa: F401
        isolation = ["--no-build-isolation"]  # the backend is here: no index needed
    except ImportError:
        isolation = []  # pip installs the backend from the configured index
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                           str(ROOT), "-w", str(out)], capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0 and not os.environ.get("CI") and "hatchling" in done.stderr:
        pytest.skip(f"the build backend (hatchling) cannot be installed here: {done.stderr}")
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("evallint_policy-*.whl")
    return wheel


def test_an_installed_wheel_links_each_rule_to_the_page_it_ships(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    wheel = _build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-index", "--no-deps", str(wheel)], check=True, timeout=300)
    # the dependencies (and pygls) from this environment, after the fresh one's own packages:
    # no .pth file of this environment is read, so an editable checkout stays out of the way
    purelib = subprocess.run([str(python), "-c",
                              "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "zz_evallint_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    away = tmp_path / "elsewhere"  # nowhere near the checkout
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([str(python), "-c", PROBE], cwd=away, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    import json

    seen = json.loads(done.stdout)
    package = Path(seen["package"]).resolve().parent
    assert package.is_relative_to(venv.resolve()), seen
    assert seen["sarif"] == seen["server"] == seen["url"]
    page, anchor = _anchored_page(seen["url"])
    assert page.resolve().is_relative_to(package), seen  # the copy inside the package
    assert anchor == "el102" and _has_anchor(page, anchor)
    assert page.read_text(encoding="utf-8") == (ROOT / "docs" / "rules.md").read_text(
        encoding="utf-8")
