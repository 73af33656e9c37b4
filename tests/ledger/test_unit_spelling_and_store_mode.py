"""A person's ID re-spelled is still that person, and the store is readable by its owner only.

The same persons' rows re-exported with their IDs lower-cased, Unicode-decomposed, written
with thousands separators or with a byte-order mark pass no budget their own account has used
up (docs/design.md §9: two spellings of one person as two units would under-count); and the
store file (which holds each run's map and the units' class counts) is created with mode 0600.
"""

import os
import warnings
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


def _as_other_user(path, other):
    """Make ``path`` (a file or a symbolic link) another user's: a real chown, so root only."""
    if os.getuid() != 0:
        pytest.skip("os.chown to another user needs root")
    os.chown(path, other, -1, follow_symlinks=False)


def test_a_key_file_planted_after_the_store_was_opened_is_warned_of_when_read(tmp_path):
    # The check ran when the store was opened; the key file is made (or found) only at the first
    # charge naming units. One planted by another user in that window is read then: warned of.
    from core.errors import PrivacyWarning

    path = tmp_path / "ledger.sqlite"
    led = PrivacyLedger("clinic", store=path)
    led.charge(PureDPEntry.uniform(eps_step=0.1, n_steps=1))  # the store is open; no key file yet
    key = tmp_path / "ledger.sqlite.key"
    key.write_text("ab" * 32 + "\n")  # the planter knows this key
    _as_other_user(key, os.getuid() + 4242)
    with pytest.warns(PrivacyWarning, match="belong to another user") as caught:
        led.charge(PureDPEntry.uniform(eps_step=0.1, n_steps=1), units=list(range(5)))
    assert str(key) in str(caught[0].message)


def test_a_store_reached_through_another_users_link_or_folder_is_warned_of(tmp_path):
    # A symbolic link another user owns, or a folder another user owns (or anyone may write without
    # the sticky bit): its owner can point the link elsewhere or delete and replace the files, which
    # resets what is charged, though every file is yours.
    from core.errors import PrivacyWarning

    other = os.getuid() + 4242
    real = tmp_path / "mine" / "ledger.sqlite"
    PrivacyLedger("clinic", store=real).charge(PureDPEntry.uniform(eps_step=0.1, n_steps=1))
    shared = tmp_path / "shared"
    shared.mkdir()
    link = shared / "ledger.sqlite"
    link.symlink_to(real)
    _as_other_user(link, other)
    with pytest.warns(PrivacyWarning, match="another user") as caught:
        PrivacyLedger("clinic", store=link).total()
    assert str(link) in str(caught[0].message)
    for folder_mode, owner in ((0o700, other), (0o777, os.getuid())):
        folder = tmp_path / f"folder{folder_mode:o}"
        folder.mkdir()
        PrivacyLedger("clinic", store=folder / "ledger.sqlite").charge(PureDPEntry.uniform(eps_step=0.1, n_steps=1))
        os.chmod(folder, folder_mode)
        _as_other_user(folder, owner)
        with pytest.warns(PrivacyWarning, match="folder") as caught:
            assert PrivacyLedger("clinic", store=folder / "ledger.sqlite").total().epsilon == 0.1
        assert str(folder) in str(caught[0].message)
    sticky = tmp_path / "sticky"  # like /tmp: anyone may add files, none may delete another's
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        PrivacyLedger("clinic", store=sticky / "ledger.sqlite").charge(PureDPEntry.uniform(eps_step=0.1, n_steps=1))
        PrivacyLedger("clinic", store=sticky / "ledger.sqlite").total()
