"""Session binding shared by the pages: defaults, widget keys, the demo seed, errors in place.

Everything here remembers the user's choices (``st.session_state``, one per browser
session).  The privacy settings are one dict for every mechanism, generated from the
registry (:mod:`core.mechanisms.registry`): each registered parameter's default, and
the chosen mechanism's name.  No algorithm lives here.

The pages live in ``app_pages/``, not in a folder named ``pages/``: beside the main script
that name switches on Streamlit's old "pages folder" mode, in which a freshly started
server lists every file of the folder in the menu and runs a page without ``app.py`` until
``st.navigation`` has run once (``tests/app/test_app.py`` checks both).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import streamlit as st

from core.errors import PrivateLabelLabError
from app_pages._text import app_words, literal

DEMO_SEED = 2018
"""The fixed seed of the "reproducible demo" option (never used otherwise, never exported).
It draws the noise of teaching data only: a real job's noise always comes from the
operating system (:func:`noise_rng`)."""

DEFAULT_DATASET = "breast_cancer"
"""The bundled dataset offered first when the user picks "Bundled dataset"."""

# First launch: a complete, convincing result without a click, in a few seconds.
#
# BTT answers a query for free when its vote is stable and pays one of its T rounds for
# each ⊥, so the first screen needs (a) enough teachers that a unanimous vote clears the
# threshold w with room to spare (core.theory.btt_min_teachers: k ≥ 2⌊w⌋ + 3, here w = 97 and
# k ≥ 197 at ε = 4, δ = 1e-5, T = 5, m = 2,000, tight calibration; k = 400 lets a vote
# with about 75 % agreement pass, so accurate teachers pass on almost every query) and
# (b) data on which few public queries are genuinely ambiguous.  Two Gaussian classes
# 6 standard deviations apart (Bayes error Φ(−3) ≈ 0.13 %) in d = 2 dimensions do both:
# 40 rows per teacher already give accurate teachers, and only the handful of queries
# near the boundary are ⊥.  Gaussian naive Bayes is the matching generative model and
# among the fastest learners to fit, so 400 teachers train in about two seconds.
# 20,000 rows split 10 % public (m = 2,000 queries), 10 % held-out test, 80 % private
# (16,000 rows, δ = 1e-5 well below 1/n).  The demo seed gives 1,997 answered and 3 ⊥.
DEFAULT_GENERATOR = "two_gaussians"
DEFAULT_GENERATOR_PARAMS: dict[str, Any] = {"d": 2, "separation": 6.0}

DEFAULT_DATA: dict[str, Any] = {
    "source": "generator",
    "name": DEFAULT_GENERATOR,
    "n": 20_000,
    "params": dict(DEFAULT_GENERATOR_PARAMS),
    "public_fraction": 0.1,
    "test_fraction": 0.1,
}
DEFAULT_ENSEMBLE: dict[str, Any] = {"learner": "gaussian_nb", "params": {}, "k": 400}
DEFAULT_MECHANISM = "btt"

PAGES: list[tuple[str, str, str]] = [
    ("app_pages/1_Data.py", "Data", ":material/table_view:"),
    ("app_pages/7_A_leak.py", "A leak", ":material/water_drop:"),
    ("app_pages/2_Ensemble.py", "Ensemble", ":material/groups:"),
    ("app_pages/3_Private_labeling.py", "Private labeling", ":material/lock:"),
    ("app_pages/7_One_query.py", "One query", ":material/biotech:"),
    ("app_pages/4_Bounds.py", "Bounds", ":material/show_chart:"),
    ("app_pages/9_Sweeps.py", "Sweeps", ":material/stacked_line_chart:"),
    ("app_pages/5_Compare.py", "Compare", ":material/compare_arrows:"),
    ("app_pages/6_Student_and_export.py", "Student & export", ":material/school:"),
    ("app_pages/8_Privacy_audit.py", "Privacy audit", ":material/policy:"),
]
"""The app's pages in menu order: (script from the repository root, title, icon)."""

BOTTOM_POLICIES: dict[str, str] = {
    "drop": "drop the ⊥ rows (default)",
    "random": "give ⊥ rows a random label (BTT's analysis)",
    "semi": "keep ⊥ rows unlabeled (semi-supervised student)",
}


def app_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists: the pages ``app.py`` registers."""
    root = Path(__file__).resolve().parent.parent
    return [entry for entry in PAGES if (root / entry[0]).is_file()]


def first_view(ds) -> str | None:
    """A dataset was just loaded: apply its first-view settings once (app_pages/_lessons.py)."""
    from app_pages import _lessons

    return _lessons.first_view(ds)


def default_privacy() -> dict[str, Any]:
    """The privacy settings of a new session: every registered parameter's default.

    Derived parameters (they follow from ε) and parameters without a default are left
    out; :func:`core.pipeline.resolve` fills them in.
    """
    from core.mechanisms import registry

    out: dict[str, Any] = {"mechanism": DEFAULT_MECHANISM}
    for name in registry.names():
        mech = registry.get(name)
        for p in mech.parameters:
            if p.default is not None and p.name not in mech.derived:
                out.setdefault(p.name, p.default)
    out.setdefault("epsilon", registry.PARAMETERS["epsilon"].default)
    return out


# --------------------------------------------------------------------------------------
# Session state
# --------------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def server_seed() -> int:
    """A seed drawn once per server process from the operating system.

    It names the random split of teaching data and the teacher partition, and nothing else:
    both are drawn without reading any private value, so sharing them costs no privacy.
    Every session of the server starts from it, so a class opening the same view shares one
    split, one trained ensemble and one set of votes instead
    of training its own per session; a restarted server draws another.  Noise is never drawn
    from it (:func:`noise_rng`: operating-system entropy for every run, unless the
    reproducible demo seed is on).
    """
    return secrets.randbits(31)


def init() -> None:
    """Put the defaults into this session's state (idempotent).

    Parameters of mechanisms registered after the session started get their defaults
    too (the registry is read on every call).
    """
    ss = st.session_state
    for key in KEPT_TOGGLES:  # a page switch from a button cleared them: back to the value the user chose
        if key not in ss and f"_kept_{key}" in ss:
            ss[key] = ss[f"_kept_{key}"]
    if "_session_seed" not in ss:
        # The server's seed (see server_seed): it only names the random split and the teacher
        # partition, so that every session of the server shares them and their cached work.
        ss["_session_seed"] = server_seed()
    ss.setdefault("demo_seed", demo_seed_by_default())
    ss.setdefault("data_cfg", dict(DEFAULT_DATA, params=dict(DEFAULT_DATA["params"])))
    # The Data page's generator controls start from the default dataset's parameters.
    ss.setdefault(f"gen_{DEFAULT_GENERATOR}", dict(DEFAULT_GENERATOR_PARAMS))
    ss.setdefault("ensemble_cfg", dict(DEFAULT_ENSEMBLE, params=dict(DEFAULT_ENSEMBLE["params"])))
    privacy_now = ss.setdefault("privacy", {})
    for name, value in default_privacy().items():
        privacy_now.setdefault(name, value)
    ss.setdefault("_labelings", OrderedDict())


KEPT_TOGGLES = ("demo_seed", "projector")
"""The sidebar's switches that hold for the whole session (the demo seed, the projector).  A page
switch from a button (a lecture preset, ``st.switch_page``) clears every widget's state, so
:func:`keep_toggles` copies their values after the sidebar draws them and :func:`init` puts them back."""


def keep_toggles() -> None:
    """Copy the sidebar's switches (:data:`KEPT_TOGGLES`) into state no page switch clears; call
    after they are drawn."""
    ss = st.session_state
    for key in KEPT_TOGGLES:
        if key in ss:
            ss[f"_kept_{key}"] = bool(ss[key])


DEMO_SEED_ENV = "PRIVATE_LABEL_LAB_DEMO_SEED"
"""Set to 1 (``make run DEMO=1``) to start every session with the reproducible demo seed on."""


def demo_seed_by_default() -> bool:
    """Whether new sessions start with the demo seed on: a lecture's server, where every
    student should see the projector's numbers (each can still switch it off)."""
    return os.environ.get(DEMO_SEED_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def demo_mode() -> bool:
    """Whether the "reproducible demo seed" option is on."""
    return bool(st.session_state.get("demo_seed", False))


def seed() -> int:
    """The seed naming this session's random split and teacher partition."""
    init()
    return DEMO_SEED if demo_mode() else int(st.session_state["_session_seed"])


NOISE_STREAMS = {"explore": 0, "release": 1, "selection": 2, "agreement": 3, "class_shares": 4}
"""Offsets of the demo seed for the draws of teaching data: exploring runs, releases (a new
draw, still repeatable), private selection and the two priced estimates."""


def noise_rng(ds: Any, stream: str = "explore", offset: int = 0) -> int | None:
    """The ``rng`` argument of a draw of noise: None (operating-system entropy) unless the
    reproducible demo seed is on AND the data is teaching data.

    A real job (:func:`is_real_job`) never draws from the demo seed, whatever the sidebar
    toggle or the server's ``DEMO=1``: the seed is public, so a release drawn from it could
    be recomputed offline by anyone, and no finite ε would hold.  ``ds`` is the loaded
    dataset the draw is about; ``stream`` and ``offset`` pick the demo
    seed's offset (:data:`NOISE_STREAMS`), so that a release is a new draw of the lesson.
    """
    if not demo_mode() or is_real_job(ds):
        return None
    return DEMO_SEED + NOISE_STREAMS[stream] + int(offset)


def synthetic_rng() -> int | None:
    """The ``rng`` of draws on made-up inputs only (the privacy audit's neighbouring pairs):
    the demo seed when it is on, else operating-system entropy.  Never for the private data."""
    return DEMO_SEED if demo_mode() else None


def privacy() -> dict[str, Any]:
    """The current privacy settings (one dict for every mechanism, in session state)."""
    init()
    return st.session_state["privacy"]


def request(mechanism: str, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the session asks ``mechanism`` for: ε (where it takes ε) and its other settings.

    Derived parameters (e.g. LNMax's γ) are never part of the request: they follow from ε
    through :func:`core.pipeline.resolve`, as on the command line.
    """
    from core.mechanisms import registry

    mech = registry.get(mechanism)
    source = dict(privacy(), **(settings or {}))
    wanted = [p.name for p in mech.parameters if p.name not in mech.derived]
    if mech.takes_epsilon and "epsilon" not in wanted:
        wanted.insert(0, "epsilon")
    return {name: source[name] for name in wanted if source.get(name) is not None}


def widget_key(section: str, name: str) -> str:
    """The key of the widget editing ``st.session_state[section][name]``.

    Streamlit forgets a widget's value when its page is not shown; the persistent copy
    lives in ``st.session_state[section]`` and seeds the widget when it comes back.
    """
    init()
    key = f"w_{section}_{name}"
    if key not in st.session_state:
        st.session_state[key] = st.session_state[section][name]
    return key


def widget_key_for(section: str, name: str, default: Any) -> str:
    """Like :func:`widget_key` for a value that has no persistent entry yet."""
    st.session_state.setdefault(section, {}).setdefault(name, default)
    return widget_key(section, name)


def remember(section: str, name: str, value: Any) -> None:
    """Store a widget's value in the persistent settings."""
    init()
    st.session_state[section][name] = value


def enter_page(name: str) -> None:
    """Called by ``app.py`` before a page runs: on a page change, forget widget mirrors.

    Pages share settings (ε is set on three pages), and their widgets use the same keys.
    When the page changes, every ``w_*`` widget key is dropped so that the new page's
    widgets start from the persistent settings, never from another page's widget state.
    """
    init()
    ss = st.session_state
    if ss.get("_page") != name:
        for key in [k for k in ss if isinstance(k, str) and k.startswith("w_")]:
            del ss[key]
        ss["_page"] = name


class NotOffered(PrivateLabelLabError):
    """A view that this data does not offer (e.g. a teaching view on a real job): shown as a
    next step with ``st.info``, and the page ends there (the sidebar is still drawn)."""

    shown_as = "info"


@contextlib.contextmanager
def shown_errors() -> Iterator[None]:
    """Show a library error in place with ``st.error`` instead of a traceback.

    An error that is no failure but a next step (``exc.shown_as == "info"``, e.g. "nothing
    has run on the private votes yet") is shown with ``st.info``.  The message is shown as text
    (:func:`app_pages._text.literal`): it may quote a column or class name from the user's file.
    """
    try:
        yield
    except PrivateLabelLabError as exc:
        (st.info if getattr(exc, "shown_as", "error") == "info" else st.error)(app_words(exc))


# --------------------------------------------------------------------------------------
# The two kinds of data: teaching data and a real job
# --------------------------------------------------------------------------------------

TEACHING = "teaching"
"""Generated sets, the bundled demo sets, and uploads declared to hold nobody's private data."""
REAL = "real"
"""Any upload (one file or two) and the bundled two-file job: nothing runs on the private
votes unless the user asks for that run and has seen its price."""

TEACHING_DECLARATION = (
    "I confirm that this upload holds nobody's private data: every row is made up, already public, "
    "or published for teaching, so looking at it as often as I like harms no one."
)
"""The worded confirmation that turns an upload into teaching data."""

KIND_TEXT = {
    TEACHING: "**Teaching data**: everything runs live as you move the controls; the ledger counts your "
              "runs as part of the lesson and is yours alone.",
    REAL: "**Real job**: nothing runs on the private votes unless you ask for that run and have seen its "
          "price. The pages show predictions from public quantities (free); a run on the private votes is a "
          "button that says what it costs and is counted on this data's ledger.",
}


def _upload_identity(cfg: dict[str, Any]) -> tuple[str, str] | None:
    if cfg.get("source") != "upload" or not cfg.get("private_hash"):
        return None
    return (str(cfg["private_hash"]), str(cfg.get("public_hash") or ""))


def data_kind(ds: Any, cfg: dict[str, Any] | None = None) -> str:
    """:data:`TEACHING` or :data:`REAL` for a loaded dataset (``app_pages._datasets.Dataset``).

    Generated and bundled demo sets are teaching data; an upload (one file or two) and a
    bundled two-file job are a real job, unless this session declared the upload to be
    teaching data (:func:`declare_teaching`).  ``cfg`` is the data configuration the
    dataset was loaded from (the session's current one by default).
    """
    if getattr(ds, "source", None) in ("generator", "bundled"):
        return TEACHING
    init()
    ident = _upload_identity(cfg if cfg is not None else st.session_state["data_cfg"])
    if ident is not None and ident in st.session_state.get("_teaching_uploads", set()):
        return TEACHING
    return REAL


def is_real_job(ds: Any) -> bool:
    """Whether ``ds`` is a real job (:func:`data_kind`)."""
    return data_kind(ds) == REAL


def can_declare_teaching() -> bool:
    """Whether the loaded data is an upload (only an upload may be declared teaching data)."""
    init()
    return _upload_identity(st.session_state["data_cfg"]) is not None


def declare_teaching(teaching: bool) -> None:
    """Declare the current upload teaching data (True) or a real job again (False)."""
    init()
    ident = _upload_identity(st.session_state["data_cfg"])
    if ident is None:
        return
    declared = st.session_state.setdefault("_teaching_uploads", set())
    if (ident in declared) == bool(teaching):
        return
    (declared.add if teaching else declared.discard)(ident)
    forget_runs()


def forget_runs() -> None:
    """Forget every run this session remembers: its labelings, its release, the paid comparison
    and the students of them.

    Called when an upload's kind changes (teaching data ↔ a real job): a run made under one
    kind is never shown, released or exported under the other (a teaching run may have drawn
    from the public demo seed and was charged to the lesson's ledger, not the data's).
    """
    ss = st.session_state
    ss.get("_labelings", {}).clear()
    for key in ("_release", "_paid_compare", "_students", "audit_result", "_quality_note", "_microscope_one",
                "_microscope_many", "_microscope_certain", "_microscope_pick"):
        ss.pop(key, None)


def fmt(x: float | None, digits: int = 3) -> str:
    """Format a number for display (— when absent)."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return f"{x:.{digits}g}"
