"""What the tree names, made safe to print: file names, variable names and quoted text come
from an untrusted tree and reach terminals, CI logs and code-scanning pages.

A newline in a file name would start a line of its own (in a GitHub Actions log, a line that
starts with ``::`` is a workflow command the runner carries out); an ESC byte would drive the
terminal. Every field taken from the tree is printed with its control characters escaped
(``\\n``, ``\\x1b``, ``\\u2028``), and a path never starts a line with ``:``.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def clean_text(text: str) -> str:
    """``text`` with every control character shown as an escape (one line, inert)."""
    if text.isprintable():
        return text
    return _CONTROL.sub(_escape, text)


def clean_path(path: str) -> str:
    """A path as :func:`clean_text`, and ``./`` before one that starts with ``:``, ``-`` or
    a blank (so that no line starts with ``::`` and no path reads as an option)."""
    shown = clean_text(path)
    return f"./{shown}" if shown[:1] in (":", "-", " ") else shown


def json_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``, which escapes C0 controls
    already) with DEL, the C1 controls and the line separators escaped too."""
    return re.sub("[\x7f-\x9f\u2028\u2029]", lambda m: f"\\u{ord(m.group()):04x}", text)
