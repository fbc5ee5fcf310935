"""Python and notebook analysis: libcst -> facts (``ir``/``build``), project-level data flow
from the generator's call to the evaluator's (``analysis``)."""
