"""The audit per person: neighbours that differ in all the rows of one person (docs/design.md §1.2).

How these tests can fail by chance: each audit returns a lower confidence bound that
exceeds a true ε with probability at most 1 − confidence = 1 %; the seeds are fixed, so
the runs are deterministic.  The per-person claims pass with wide margins (GNMax 0.39 of
1.0; the logistic regression 0.31 of 2.0); the per-row runs are flagged with margins that
the trial counts resolve (GNMax 1.98 against 1.0; the logistic regression 2.42 against 2.0).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.audit import check_neighbouring_counts
from core.audit.persons import person_gnmax_audit, person_logistic_audit, person_vote_pair
from core.errors import ParameterError

pytestmark = pytest.mark.slow


def test_votes_differ_by_one_teacher_per_person_and_by_several_per_row():
    per_person = person_vote_pair(per_person=True, seed=1)
    assert per_person.teachers_changed == 1
    check_neighbouring_counts(per_person.counts_a, per_person.counts_b)  # one vote moved: the proof's neighbours
    per_row = person_vote_pair(per_person=False, seed=1)
    assert per_row.teachers_changed >= 3
    with pytest.raises(ParameterError):
        check_neighbouring_counts(per_row.counts_a, per_row.counts_b)


def test_gnmax_passes_per_person_and_the_per_row_claim_is_flagged():
    ok, _ = person_gnmax_audit(per_person=True, seed=1, rng=3)
    assert ok.passed, ok.summary()
    flagged, votes = person_gnmax_audit(per_person=False, seed=1, rng=3)
    assert not flagged.passed and flagged.epsilon_lower_bound > 1.5 * flagged.claimed_epsilon, flagged.summary()


def test_dp_logistic_passes_per_person_and_the_per_row_claim_is_flagged():
    ok = person_logistic_audit(per_person=True, rng=4)
    assert ok.passed, ok.summary()
    flagged = person_logistic_audit(per_person=False, rng=4)
    assert not flagged.passed, flagged.summary()
