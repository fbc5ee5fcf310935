"""`evallint server`: a Language Server Protocol server over stdio (needs the `server` extra).

``workspace`` lints editor buffers with the same engine as ``evallint check`` (no pygls needed,
so it is testable on its own); ``positions`` converts between evallint's character columns and
the client's position encoding; ``lsp`` is the pygls server; ``command`` the click command.
"""
