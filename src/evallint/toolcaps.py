"""What a tool an evaluator holds can do, for every kind that grants tools (I5, EL401/EL403).

One table serves Claude Code agents and their settings, MCP tools and the tools handed to an
SDK call in Python: the EL401 rule file holds the Claude Code tool table, the server tool types
of the model APIs, and the words by which an MCP or function tool's name says it changes
something. A tool that none of these knows is not taken for a writer (precision first).
"""

from __future__ import annotations

from typing import Any

from evallint.roles import name_tokens

REPORTED = ("write", "edit", "exec", "delegate")
VERBS = {"write": "can write files", "edit": "can edit files", "exec": "runs commands",
         "delegate": "starts sub-agents, skills or commands that can write or execute",
         "network": "reaches the network", "control": "controls background shells",
         "read": "only reads"}


def capability(name: str, params: dict[str, Any]) -> str | None:
    """What a tool named ``name`` can do (``write``, ``edit``, ``exec``, ``delegate``,
    ``network``, ``control``, ``read``), or None when the EL401 tables do not know it.

    Order: the tool table (Claude Code names), the extra ``write_tools`` names, the API server
    tool types (``bash_20250124``, ``code_interpreter``), then the words of an MCP tool's or a
    function tool's own name (``mcp__fs__write_file``, ``run_shell``).
    """
    low = name.lower()
    table = {str(k).lower(): str(v).lower()
             for k, v in (params.get("tool_capabilities") or {}).items()}
    found = table.get(low)
    if found is not None:
        return found
    if low in {str(t).lower() for t in params.get("write_tools", [])}:
        return "write"
    for key, cap in (params.get("server_tool_types") or {}).items():
        # "bash_" is a family of versioned types (bash_20250124); "code_interpreter" is one type
        k = str(key).lower()
        if low == k or (k.endswith("_") and low.startswith(k)):
            return str(cap).lower()
    if low.startswith("mcp__"):
        parts = name.split("__")
        if len(parts) < 3:
            return None  # a whole server: its tools are not known statically
        words = {str(w).lower() for w in params.get("mcp_write_words", [])}
        return "write" if set(name_tokens(parts[-1])) & words else None
    words = {str(w).lower() for w in params.get("function_write_words", [])}
    return "write" if set(name_tokens(name)) & words else None


def reported(params: dict[str, Any]) -> set[str]:
    """The capabilities an evaluator must not hold (``reported_capabilities``)."""
    return {str(c).lower() for c in params.get("reported_capabilities", REPORTED)}


def writes(name: str, params: dict[str, Any]) -> bool:
    """Can the tool change what the judge grades (a reported capability)?"""
    cap = capability(name, params)
    return cap is not None and cap in reported(params)
