"""``python -m evallint.executor SPEC`` runs a loop without the rest of the evallint CLI."""

from evallint.executor.cli import run

if __name__ == "__main__":
    run(prog_name="evallint run")
