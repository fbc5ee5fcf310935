"""Rule checks: each module registers checks bound to rule ids from rules/*.yaml."""
