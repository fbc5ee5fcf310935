"""Allow ``python -m evallint``."""

from evallint.cli import entry

if __name__ == "__main__":
    entry()
