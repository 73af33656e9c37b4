"""The declared class list (``load_table(..., classes=...)``, docs/design.md §1.3).

Neighbouring files under add/remove one person: ``base`` and ``base`` plus one row of a class no
other row holds.  Read from the rows, the two class lists differ (documented: the list is then
treated as public); declared, the class list, the DP-training routes' number of one-vs-rest
models and the report's ``classes`` section are the same for both.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import make_result

from core.data import CLASSES_READ_NOTE, check_classes, class_statement, load_table, split_public
from core.data.table import MAX_CLASSES
from core.errors import DataError, ParameterError
from core.export import privacy_report

BASE = "x,c,label\n" + "".join(f"{i % 7}.5,{'uv'[i % 2]},{'no' if i % 3 else 'yes'}\n" for i in range(30))
RARE = BASE + "2.0,u,maybe\n"  # one person's class


def _report(table):
    result = make_result(np.zeros(4, dtype=int), mechanism="lnmax", epsilon=1.0)
    return privacy_report(result, n_private=31, n_public=4, learner="gaussian_nb", k=2,
                          classes=table.class_names, classes_declared=table.classes_declared)["classes"]


def test_read_from_the_rows_the_neighbours_lists_differ_and_say_so():
    a, b = load_table(BASE.encode()), load_table(RARE.encode())
    assert (a.class_names, b.class_names) == (("no", "yes"), ("maybe", "no", "yes"))
    assert not a.classes_declared and not b.classes_declared
    assert _report(a)["names"] != _report(b)["names"]
    assert _report(a)["statement"] == _report(b)["statement"] == CLASSES_READ_NOTE
    assert CLASSES_READ_NOTE.startswith("CLASS LIST READ FROM THE PRIVATE FILE, treated as public")


@pytest.mark.parametrize("missing", ["refuse", "impute", "drop"])
def test_declared_the_neighbours_release_the_same_list(missing):
    declared = ["yes", "maybe", "no"]  # the declared order, not the alphabet's
    a, b = (load_table(t.encode(), classes=declared, missing=missing) for t in (BASE, RARE))
    assert a.class_names == b.class_names == ("yes", "maybe", "no")
    assert a.classes_declared and b.classes_declared
    assert a.class_counts.tolist() == [10, 0, 20] and b.class_counts.tolist() == [10, 1, 20]  # a class with no row kept
    assert _report(a) == _report(b) == {"names": declared, "declared": True,
                                        "statement": "classes declared (public): yes, maybe, no"}
    # The DP-training routes fit one model per declared class (ε/c each): c does not read the rows.
    from core import pipeline

    assert {pipeline.mechanism_inputs("dp-logistic", None, t, t.features.iloc[:3]).n_classes for t in (a, b)} == {3}
    assert all(part.classes_declared for part in split_public(b, 5, rng=0))
    # The app fits k to a newly loaded table with largest_k: with a declared list it reads no class count, so the
    # neighbours' k (published in every report) is the same; read from the rows, it is 2 · the smallest class.
    from core.data import largest_k

    assert largest_k(a) == largest_k(b) == max(2, a.n_units // 2)
    assert largest_k(load_table(RARE.encode())) == 2


def test_an_undeclared_label_is_a_row_without_a_label():
    dropped = load_table(RARE.encode(), classes=["no", "yes"], missing="drop")
    assert dropped.class_names == ("no", "yes") and dropped.n_rows == 30
    assert dropped.dropped_rows == 1 and dropped.missing_counts["label"] == 1
    assert dropped.n_units == 31  # the file's rows before the drop: the same count as the neighbour's file
    for missing in ("refuse", "impute"):
        with pytest.raises(DataError) as info:
            load_table(RARE.encode(), classes=["no", "yes"], missing=missing)
        message = str(info.value)
        assert "not among the declared classes (no, yes): 'maybe' (data row(s) 31)" in message
        assert "missing='drop'" in message and "Add the missing class(es)" in message


@pytest.mark.parametrize("bad, words", [
    ("no,yes", "list of class names"), (["no"], "at least two"), (["no", " no "], "more than once"),
    (["no", ""], "empty"), ([f"c{i}" for i in range(MAX_CLASSES + 1)], f"at most {MAX_CLASSES}"),
    ([["no"], "yes"], "as text"), (5, "list of class names"),
])
def test_a_declared_list_is_checked(bad, words):
    with pytest.raises(ParameterError, match=words):
        load_table(BASE.encode(), classes=bad)


def test_names_are_stripped_and_numbers_match_the_file():
    assert check_classes([" no", "yes "]) == ("no", "yes")
    numeric = "x,label\n" + "".join(f"{i}.5,{i % 2}\n" for i in range(10))
    assert load_table(numeric.encode(), classes=[1, 0, 2]).class_names == ("1", "0", "2")
    assert class_statement(("a", "b"), False) == CLASSES_READ_NOTE
