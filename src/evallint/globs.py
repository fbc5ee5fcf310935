"""gitignore-flavoured glob matching for config paths (``**``, basename-only patterns)."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    pat = pattern.strip()
    anchored = "/" in pat.rstrip("/")
    pat = pat.lstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2)  # "[]...]" keeps a literal "]" first, as fnmatch does
            if j == -1:
                out.append(re.escape(c))
            else:
                inner = pat[i + 1 : j]
                neg = inner.startswith("!")
                inner = inner[1:] if neg else inner
                # "-" stays a range; a second "-" in a row is literal ("--" would read as a
                # future set operation to ``re``)
                body = "".join("\\-" if ch == "-" and k and inner[k - 1] == "-" else
                               ch if ch == "-" else re.escape(ch)
                               for k, ch in enumerate(inner))
                out.append("[" + ("^" if neg else "") + body + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    # A pattern without a slash matches a basename at any depth, like .gitignore.
    prefix = "" if anchored else "(?:.*/)?"
    try:
        return re.compile(f"^{prefix}{body}(?:/.*)?$")
    except re.error:  # a malformed class such as "[z-a]": match the pattern literally
        return re.compile(f"^{prefix}{re.escape(pat)}(?:/.*)?$")


def match(rel: str, pattern: str) -> bool:
    """True when the '/'-separated relative path matches the pattern (or lies under it)."""
    return bool(_compile(pattern).match(rel))


def match_any(rel: str, patterns: list[str] | tuple[str, ...]) -> bool:
    return any(match(rel, p) for p in patterns)
