"""Allow ``python -m evallint``."""

from evallint.cli import main

if __name__ == "__main__":
    main()
