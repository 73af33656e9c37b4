"""A real job's ledger is its name's, in the store shared with the command line (AppTest).

* The app and ``private-label-lab label --dataset NAME`` charge one ledger and show one total.
* Two processes charging the same dataset while an app session runs on it: every charge is
  recorded and the budget is never passed.
* Without a name nothing can be spent; a name given once is remembered by the session.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from test_app import ROOT, go, texts
from test_app_plan_spend import name_job, spent, train, two_files, upload_two_files


def store_ledger(name: str):
    from core.ledger import PrivacyLedger, store_path

    return PrivacyLedger(name, store=store_path())


def test_the_app_and_the_command_line_charge_one_named_dataset(lab, tmp_path, capsys):
    from core.cli import EXIT_OK, main

    private, public = two_files()
    (tmp_path / "private_copy.csv").write_bytes(private.replace(b"\n", b"\r\n"))  # the owner's own copy
    (tmp_path / "public.csv").write_bytes(public)
    args = ["label", "--overwrite", "--private", str(tmp_path / "private_copy.csv"), "--public", str(tmp_path / "public.csv"),
            "--label-column", "label", "--learner", "gaussian_nb", "--k", "40", "--mechanism", "gnmax",
            "--epsilon", "1", "--delta", "1e-6", "--out", str(tmp_path / "labeled.csv"), "--dataset", "job",
            "--budget-epsilon", "6", "--budget-delta", "1e-4"]
    assert main(args) == EXIT_OK
    cli_total = store_ledger("job").total()
    at = train(upload_two_files(lab(), name="job"))  # the app names the upload as the CLI did
    go(at, "Private labeling")
    eps, _, runs = spent(at)
    assert runs == 1 and eps == pytest.approx(cli_total.epsilon, abs=5e-4)  # the CLI's run, seen by the app
    assert "Total privacy budget on this data: (ε, δ) = (6, 0.0001)" in " ".join(texts(at.main.markdown))
    at.button(key="run_private").click().run()
    assert not at.exception, at.exception
    assert spent(at)[2] == 2
    capsys.readouterr()
    assert main(args) == EXIT_OK
    assert "dataset 'job': 3 run(s)" in capsys.readouterr().out
    assert len(store_ledger("job")) == 3
    at.run()
    assert spent(at)[2] == 3 and spent(at)[0] == pytest.approx(store_ledger("job").total().epsilon, abs=5e-4)


def test_an_unnamed_real_job_spends_nothing_and_its_name_is_asked_once(lab):
    at = train(upload_two_files(lab(), name=None))
    go(at, "Private labeling")
    assert any("Name this data and set its total budget first" in e for e in texts(at.error)), texts(at.error)
    assert at.button(key="run_private").proto.disabled
    assert at.text_input(key="job_name_input").value == "private"  # the file's name is offered
    assert "not known until you name it" in " ".join(c.value for c in at.sidebar.caption)
    name_job(at, "clinic-2024")
    assert "its ledger: clinic-2024" in " ".join(c.value for c in at.sidebar.caption)
    go(at, "Student & export")
    assert not [t for t in at.text_input if t.key == "job_name_input"]  # remembered: not asked again
    assert any("Ledger of this data: clinic-2024" in t for t in texts(at.main.markdown))


CHARGER = """
import sys, time
from core import ledger as L
from core.errors import BudgetExhausted
led = L.PrivacyLedger("shared", store=sys.argv[1])
ok = refused = 0
for i in range(10):
    try:
        led.charge(L.PureDPEntry.uniform(eps_step=0.5, n_steps=1, mechanism="process"))
        ok += 1
    except BudgetExhausted:
        refused += 1
    time.sleep(0.05)
print(ok, refused)
"""


@pytest.mark.slow
def test_two_processes_and_an_app_session_charging_one_dataset_never_pass_its_budget(lab):
    from core.ledger import store_path

    at = train(upload_two_files(lab(), name="shared"))
    go(at, "Private labeling")
    at.number_input(key="job_budget_epsilon").set_value(8.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    at.slider(key="w_privacy_epsilon").set_value(0.5).run()
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHARGER), str(store_path())], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    app_runs = 0
    for _ in range(6):  # the session presses Run while the processes charge
        before = len(store_ledger("shared"))
        button = at.button(key="run_private")
        if button.proto.disabled:
            at.run()
            continue
        button.click().run()
        assert not at.exception, at.exception
        app_runs += any(e.mechanism != "process" for e in store_ledger("shared").entries[before:])
    counts = [tuple(map(int, p.communicate(timeout=300)[0].split())) for p in procs]
    led = store_ledger("shared")
    from_processes = sum(1 for e in led.entries if e.mechanism == "process")
    assert sum(c[0] + c[1] for c in counts) == 20 and all(p.returncode == 0 for p in procs)
    assert from_processes == sum(c[0] for c in counts)  # every accepted charge is recorded, and only those
    assert len(led) == from_processes + app_runs and app_runs >= 1
    assert sum(c[1] for c in counts) > 0  # the budget ran out while they charged
    b = led.budget
    fits = lambda t: t.epsilon <= b.epsilon * (1 + 1e-9) and t.delta <= b.delta * (1 + 1e-9)  # noqa: E731
    assert fits(led.total()) or fits(led.total(delta=b.delta))  # never past the budget
    at.run()
    assert spent(at)[2] == len(led)  # the session shows the store's total
