"""The ``evallint server`` command. pygls is an optional extra, so it is imported only here,
when the command runs: without it the user gets the install line and exit 2, not a traceback."""

from __future__ import annotations

import sys

import click

INSTALL_HINT = "pip install 'evallint-policy[server]'"


@click.command()
@click.option("--stdio", is_flag=True,
              help="Talk over standard input and output (the default and only transport; "
                   "accepted because editor clients often pass it).")
def server(stdio: bool) -> None:
    """Run the Language Server Protocol server over stdio (diagnostics, fixes, rule hovers)."""
    try:
        import lsprotocol.types  # noqa: F401
        import pygls.server  # noqa: F401
    except ImportError:
        click.echo("evallint: error: `evallint server` needs pygls, which is not installed; "
                   f"install it with: {INSTALL_HINT}", err=True)
        sys.exit(2)
    from evallint.server.lsp import serve

    serve()
