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


# --------------------------------------------------------------------------------------
# The lecture as presets: each step one click away
# --------------------------------------------------------------------------------------

_DEFAULT = {"source": "generator"}  # the app's default data: two Gaussians (app_pages/_session.py)

PRESETS: dict[str, dict[str, Any]] = {
    "a": {
        "title": "(a) A model leaks", "data": {"source": "bundled", "name": "digits"},
        "learner": "logistic_regression", "k": 50, "mechanism": "gnmax", "settings": {"epsilon": 16.0},
        "page": "app_pages/7_A_leak.py",
        "note": "A model trained on the private rows remembers them: a membership attack tells training rows from "
        "others far better than chance for the non-private model and for one teacher, and hardly at all for the "
        "published student.",
    },
    "b": {
        "title": "(b) Teachers and votes", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/2_Ensemble.py",
        "note": "400 teachers, each trained on its own 40 private rows, vote on every public query; one private "
        "row can change only one teacher's vote.",
    },
    "c": {
        "title": "(c) Noise and the test", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/7_One_query.py",
        "note": "One query under the microscope: BTT's noisy test of how stable the vote is, drawn once and "
        "100 times against the formula.",
    },
    "d": {
        "title": "(d) Knobs against rates", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/9_Sweeps.py",
        "note": "Move one knob (ε, T, k, …) and watch the answered, ⊥ and wrong rates move.",
    },
    "e": {
        "title": "(e) Theory against measurement", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/4_Bounds.py",
        "note": "BTT's theorems beside your run: each bound is shown only where its conditions hold, and the page "
        "says which condition fails otherwise.",
    },
    "f": {
        "title": "(f) PATE against BTT", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/5_Compare.py",
        "note": "Every mechanism on the same votes at the same ε. The page says what the comparison costs before "
        "it runs.",
    },
    "g": {
        "title": "(g) Student and export", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "btt", "settings": {"epsilon": 4.0, "T": 5}, "page": "app_pages/6_Student_and_export.py",
        "note": "The private labels train a student model that is safe to publish; only a release is exported.",
    },
    "certified": {
        "title": "Certified Confident-GNMax releases", "data": _DEFAULT, "learner": "gaussian_nb", "k": 400,
        "mechanism": "certified-gnmax", "settings": {"epsilon": 8.0, "delta": 1e-5},
        "page": "app_pages/3_Private_labeling.py",
        "note": "A data-dependent guarantee made safe: a noisy test of the run's privacy cost against a budget "
        "fixed in advance. On these 400 agreeing teachers at ε = 8 the test passes (probability above "
        "1 − 10⁻⁶) and the labels are released; at ε = 4 it passes only about 2 times in 5.",
    },
}
"""The lecture's steps (a)–(g) and the certified mechanism's release: data, teachers, mechanism and its
settings, and the page to open; one click each (:func:`preset_menu`)."""


def _data_cfg(spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The data configuration of a preset and the Data page's controls that show it."""
    from app_pages import _session as session

    if spec["source"] == "bundled":
        cfg = {"source": "bundled", "name": spec["name"], "public_fraction": 0.1, "test_fraction": 0.1}
        ui = {"source": "Bundled dataset", "name": spec["name"], "public_fraction": 0.1, "test_fraction": 0.1}
    else:
        d = session.DEFAULT_DATA
        cfg = dict(d, params=dict(d["params"]))
        ui = {"source": "Generator", "generator": d["name"], "n": d["n"], "public_fraction": d["public_fraction"],
              "test_fraction": d["test_fraction"]}
    return cfg, ui


def apply_preset(key: str) -> dict[str, Any]:
    """Put the session on a preset's data, teachers, mechanism and settings (nothing runs here).

    The widgets of the Data, Ensemble and privacy controls start from the preset's values; a
    bundled set's own first view is not applied over the preset.  Returns the preset.
    """
    from app_pages import _session as session

    preset = PRESETS[key]
    ss = st.session_state
    session.init()
    cfg, ui = _data_cfg(preset["data"])
    ss["data_cfg"] = cfg
    ss.setdefault("data_ui", {}).update(ui)
    if cfg["source"] == "generator":
        ss[f"gen_{cfg['name']}"] = dict(cfg["params"])
    if cfg["source"] == "bundled":
        ss.setdefault("_lessons_opened", set()).add(cfg["name"])
    ss["ensemble_cfg"] = {**ss.get("ensemble_cfg", {}), "learner": preset["learner"], "params": {}, "k": int(preset["k"])}
    if "ens_ui" in ss:
        ss["ens_ui"].update(learner=preset["learner"], k=int(preset["k"]))
    privacy = ss.setdefault("privacy", {})
    privacy.update(session.default_privacy())
    privacy.update(mechanism=preset["mechanism"], **preset["settings"])
    for k in [k for k in ss if isinstance(k, str) and (k.startswith("w_") or k.startswith("gen_w_"))]:
        del ss[k]
    ss["_preset_note"] = f"**{preset['title']}.** {preset['note']}"
    return preset


def preset_menu(where) -> None:
    """The lecture's presets, one button each: a click sets everything up and opens the step's page."""
    with where.expander("Lecture: steps (a)–(g)", expanded=True):
        for key, preset in PRESETS.items():
            if st.button(preset["title"], key=f"preset_{key}", use_container_width=True,
                         help=f"{preset['note']} Opens {preset['page'].split('_', 2)[-1][:-3].replace('_', ' ')}."):
                apply_preset(key)
                st.switch_page(preset["page"])


def preset_note() -> None:
    """The note of the preset just applied, once, above the page it opened."""
    note = st.session_state.pop("_preset_note", None)
    if note:
        st.info(note)
