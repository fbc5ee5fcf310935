"""Python and notebook analysis: ``ast`` -> facts (``ir``/``build``), project-level data flow
from the generator's call to the evaluator's (``analysis``)."""
