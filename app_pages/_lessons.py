"""First views that teach: the settings each bundled teaching set opens with, and why.

Each bundled teaching set opens (the first time in a session) with a learner, a number of
teachers, a mechanism and ε that give a readable result, measured on the set's teaching
split (80 % private, 10 % public, 10 % held out), or says plainly why a mechanism answers
nothing there and which control to move.  The numbers in the notes come from runs at
these settings (answers and accuracy on the public queries, a NON-PRIVATE teaching
measurement); the user changes any of it afterwards.

``session.first_view(ds)`` (app_pages/_session.py) calls :func:`first_view` when a dataset is
loaded.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

BTT_NOTE = (
    "BTT answers nothing on a file this small: its threshold w needs a unanimous vote of about 180 "
    "teachers or more (k ≥ 2w + 3) at ε = 4 and δ = 1e-5, i.e. a few rows per teacher here. To see BTT "
    "answer, use the generated two_gaussians data (Data page) or raise ε and lower T."
)

CONFIDENT_NOTE = (
    "Why Confident-GNMax's answered count can fall as ε grows (digits shows it on the Sweeps and Compare "
    "curves): its threshold is fixed at t = 0.8 k (automatic), and at small ε the test's noise σ1 "
    "is so large that about half of all queries pass whatever their votes. As ε grows σ1 shrinks and only "
    "queries whose top count really reaches t pass: the answered count moves towards the number of queries "
    "with at least 80 % agreement, down where most queries have less (digits), up where most have more "
    "(two well-separated Gaussians), while the answers get more accurate."
)

LESSONS: dict[str, dict[str, Any]] = {
    "breast_cancer": {
        "learner": "gaussian_nb", "k": 50, "mechanism": "gnmax", "epsilon": 4.0,
        "note": "Opens with 50 naive-Bayes teachers (9 private rows each) and GNMax at ε = 4: every public query "
        "is answered, about 9 in 10 correctly. " + BTT_NOTE,
    },
    "digits": {
        "learner": "logistic_regression", "k": 50, "mechanism": "gnmax", "epsilon": 16.0,
        "note": "Opens with 50 logistic-regression teachers (about 29 private rows each, 10 classes) and GNMax "
        "at ε = 16: every public query is answered, most of them right (about 85–90 %). With 10 classes the votes split, so at ε = 4 the "
        "labels are much noisier (about half right): move ε down to see it. " + BTT_NOTE + " " + CONFIDENT_NOTE,
    },
    "iris": {
        "learner": "gaussian_nb", "k": 10, "mechanism": "gnmax", "epsilon": 4.0,
        "note": "Opens with 10 naive-Bayes teachers (12 private rows each) and GNMax at ε = 4 on the 15 public "
        "queries (about 4 in 5 right). " + BTT_NOTE,
    },
    "wine": {
        "learner": "logistic_regression", "k": 10, "mechanism": "gnmax", "epsilon": 4.0,
        "note": "Opens with 10 logistic-regression teachers (14 private rows each) and GNMax at ε = 4 on the "
        "17 public queries (about 9 in 10 right). " + BTT_NOTE,
    },
    "mnist_5k": {
        "learner": "logistic_regression", "k": 100, "mechanism": "gnmax", "epsilon": 16.0,
        "note": "Opens with 100 logistic-regression teachers (40 private rows each, 10 classes) and GNMax at "
        "ε = 16: about 4 in 5 of the 500 answers are right; at ε = 8 about 2 in 3. " + BTT_NOTE,
    },
}
"""Bundled teaching set → first-view settings and the note shown with them."""


def lesson(ds) -> dict[str, Any] | None:
    """The first-view lesson of a dataset (bundled teaching sets only), or None."""
    if getattr(ds, "source", None) != "bundled":
        return None
    name = st.session_state.get("data_cfg", {}).get("name")
    return LESSONS.get(name)


def first_view(ds) -> str | None:
    """Apply a bundled teaching set's first-view settings once per session; return its note.

    Sets the learner and k of the ensemble and the mechanism and ε of the privacy settings
    (the widgets start from them), then says what the view shows and why.
    """
    entry = lesson(ds)
    if entry is None:
        return None
    ss = st.session_state
    name = ss["data_cfg"]["name"]
    done = ss.setdefault("_lessons_opened", set())
    if name in done:
        return None
    done.add(name)
    ss["ensemble_cfg"] = {**ss.get("ensemble_cfg", {}), "learner": entry["learner"], "params": {}, "k": int(entry["k"])}
    if "ens_ui" in ss:
        ss["ens_ui"].update(learner=entry["learner"], k=int(entry["k"]))
    for key in ("w_ens_ui_k", "w_ens_ui_learner", "w_privacy_mechanism", "w_privacy_epsilon"):
        ss.pop(key, None)
    ss.setdefault("privacy", {}).update(mechanism=entry["mechanism"], epsilon=float(entry["epsilon"]))
    st.info(entry["note"])
    return entry["note"]
