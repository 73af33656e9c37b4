"""BTT Theorem 3.2 in the theory package: its cutoff, its bound and its conditions.

The functions live in :mod:`core.accounting.btt_theorem` (below the mechanisms, which check a
run's conditions); this module names them where the theory's other calculators are.
"""

from __future__ import annotations

from core.accounting.btt_theorem import Condition, Theorem32Check, theorem_32_conditions
from core.accounting.btt import cutoff_T, misclassification_bound

__all__ = ["Condition", "Theorem32Check", "cutoff_T", "misclassification_bound", "theorem_32_conditions"]
