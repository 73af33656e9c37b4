"""A charge never reads which rows were dropped for a missing value.

With ``missing="drop"`` a person whose every row misses its label is not in the table; if
runs charged the persons left, that person's account would never move although each run's
output reveals (within its ε) that they were dropped, and whether a run is refused would
depend on a private value (their label being missing).  The table charges the whole dataset.
"""

import io

import pytest

from core.data import load_table
from core.errors import BudgetExhausted
from core.ledger import PrivacyLedger, PureDPEntry


def _file(x_label: str) -> io.StringIO:
    rows = "".join(f"X,{i},{x_label}\n" for i in range(3))
    rows += "".join(f"Q{i},{i},{i % 2}\n" for i in range(12))
    return io.StringIO("id,x,y\n" + rows)


@pytest.mark.parametrize("x_label", ["1", ""], ids=["label-present", "label-missing"])
def test_refusal_does_not_depend_on_a_missing_label(tmp_path, x_label):
    led = PrivacyLedger("clinic", store=tmp_path / "ledger.sqlite")
    led.set_budget(epsilon=1.5, delta=0.0)
    run = PureDPEntry.uniform(eps_step=1.0, n_steps=1)
    led.charge(run, units=["X"])  # an earlier run read person X only
    table = load_table(_file(x_label), label_column="y", privacy_unit="id", missing="drop")
    with pytest.raises(BudgetExhausted):
        led.charge(run, units=table.ledger_units)
