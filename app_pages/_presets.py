"""The lecture as presets: steps (a)–(g), and a certified run that releases, each one click away.

Each preset sets the data, the teachers, the mechanism and its settings, and opens the step's
page (:func:`preset_menu`, in the sidebar); nothing runs until the page does.  Listed in the
lecturer's guide, docs/guide/lecturer.md ("The lecture in seven steps").
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages import _session as session

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
