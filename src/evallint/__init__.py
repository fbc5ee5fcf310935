"""evallint: a static linter and policy checker for LLM evaluation loops."""

__version__ = "0.1.0"
