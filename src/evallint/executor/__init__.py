"""``evallint run``: the executor that runs an eval loop only once the lint passes.

Public names: :data:`evallint.executor.cli.run` (the click command), :func:`run_spec` (the same
without click), :func:`load_spec`, :func:`make_plan` and :func:`execute` for programmatic use.
"""

from evallint.executor.cli import run, run_spec
from evallint.executor.errors import ApiFailure, CostCapReached, RunError, SpecError
from evallint.executor.plan import Plan, make_plan
from evallint.executor.runner import RunOptions, RunOutcome, execute
from evallint.executor.spec import LoopSpec, load_spec

__all__ = [
    "ApiFailure", "CostCapReached", "LoopSpec", "Plan", "RunError", "RunOptions", "RunOutcome",
    "SpecError", "execute", "load_spec", "make_plan", "run", "run_spec",
]
