"""A person's ID re-spelled is still that person, and the store is readable by its owner only.

The same persons' rows re-exported with their IDs lower-cased, Unicode-decomposed, written
with thousands separators or with a byte-order mark pass no budget their own account has used
up (docs/design.md §9: two spellings of one person as two units would under-count); and the
store file (which holds each run's map and the units' class counts) is created with mode 0600.
"""

import os
import stat
import unicodedata

import pytest

from core.errors import BudgetExhausted
from core.ledger import PrivacyLedger, PureDPEntry
from core.ledger.units import canonical_id


@pytest.mark.parametrize("respell", [str.lower, str.upper, lambda s: unicodedata.normalize("NFD", s),
                                     lambda s: "\ufeff" + s + " "],
                         ids=["lowercase", "uppercase", "nfd", "bom-and-space"])
def test_respelled_ids_of_the_same_persons_are_refused(tmp_path, respell):
    led = PrivacyLedger("panel", store=tmp_path / "ledger.sqlite")
    led.set_budget(epsilon=1.5, delta=0.0)
    ids = [f"Pé{i:04d}" for i in range(40)]
    run = PureDPEntry.uniform(eps_step=1.0, n_steps=1)
    led.charge(run, units=ids)
    with pytest.raises(BudgetExhausted):
        led.charge(run, units=ids)
    with pytest.raises(BudgetExhausted):
        led.charge(run, units=[respell(i) for i in ids])


@pytest.mark.parametrize("a, b", [("1,000", 1000), ("1 000", "1000"), ("１２３", 123), ("José", "JOSE\u0301"), ("\u200e7", 7), ("P\u200f001", "p001")])
def test_one_person_one_canonical_id(a, b):
    assert canonical_id(a) == canonical_id(b)


def test_distinct_ids_stay_distinct():
    assert len({canonical_id(x) for x in ["P1", "P2", "Q1", "1", "1.5", "a b"]}) == 6


def test_store_is_not_readable_by_others(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "new" / "ledger.sqlite"
        PrivacyLedger("clinic", store=path).charge(PureDPEntry.uniform(eps_step=0.5, n_steps=1),
                                                   units=list(range(37)))
        assert not os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        assert not os.stat(path.parent).st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    finally:
        os.umask(old)


def test_a_store_made_readable_beforehand_is_made_owner_only_when_opened(tmp_path):
    path = tmp_path / "ledger.sqlite"
    PrivacyLedger("clinic", store=path).charge(PureDPEntry.uniform(eps_step=0.5, n_steps=1), units=list(range(5)))
    loose = [p for p in tmp_path.iterdir() if p.name.startswith("ledger.sqlite")]
    assert path in loose and any(p.name.endswith(".key") for p in loose)
    for p in loose:
        os.chmod(p, 0o644)
    assert PrivacyLedger("clinic", store=path).total().epsilon == 0.5  # a new process opening the store
    for p in tmp_path.iterdir():
        assert not os.stat(p).st_mode & (stat.S_IRWXG | stat.S_IRWXO), p


@pytest.mark.parametrize("how", ["chown", "stat"])
def test_a_store_or_key_file_of_another_user_is_warned_of_and_left_alone(tmp_path, monkeypatch, how):
    from core.errors import PrivacyWarning

    path = tmp_path / "ledger.sqlite"
    PrivacyLedger("clinic", store=path).charge(PureDPEntry.uniform(eps_step=0.5, n_steps=1), units=list(range(5)))
    key = tmp_path / "ledger.sqlite.key"
    os.chmod(key, 0o644)
    other = os.getuid() + 4242
    if how == "chown":  # a real file of another user (needs root)
        if os.getuid() != 0:
            pytest.skip("os.chown to another user needs root; the 'stat' case tests the same branch")
        os.chown(key, other, -1)
    else:  # the same branch, as the library sees it: os.stat reports another owner for the key file
        real = os.stat

        def stat_as_other(name, *args, **kwargs):
            info = real(name, *args, **kwargs)
            if str(name) == str(key):
                fields = list(info[:10])
                fields[4] = other
                return os.stat_result(fields)
            return info

        monkeypatch.setattr(os, "stat", stat_as_other)
    with pytest.warns(PrivacyWarning, match="belong to another user") as caught:
        assert PrivacyLedger("clinic", store=path).total().epsilon == 0.5  # a new process opening the store
    said = str(caught[0].message)
    assert str(key) in said and f"user id {other}" in said and str(path) + " " not in said
    monkeypatch.undo()
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o644  # left to its owner
    assert not os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def test_superscript_digits_are_read_as_text_ids_not_a_crash():
    from core.ledger.units import _forms

    assert len(_forms(["²", "2"])) == len({canonical_id("²"), canonical_id("2")})
