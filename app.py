"""Private Label Lab: the Streamlit entry point (navigation and the shared sidebar only).

Run with ``make run`` (or ``streamlit run app.py``).  The pages live in ``app_pages/``;
``app_pages/_session.py`` holds the list of pages (``PAGES``) and the session state,
``app_pages/_cache.py`` the caches, ``app_pages/_widgets.py`` the widgets generated from the
mechanism registry, ``app_pages/_charts.py`` the chart data.
"""

from __future__ import annotations

import streamlit as st

from core.errors import PrivateLabelLabError
from app_pages import _session as session
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _lesson_view as lesson
from app_pages import _presets as presets
from app_pages import _style as style
from app_pages import _widgets as widgets
from app_pages import _serving as serving
from app_pages._text import literal

st.set_page_config(page_title="Private Label Lab", page_icon="🔏", layout="wide")

session.init()
page = st.navigation(
    [
        st.Page(path, title=title, icon=icon, default=(i == 0))
        for i, (path, title, icon) in enumerate(session.app_pages())
    ]
)

with st.sidebar:
    ledger_box = st.container()  # the lesson's ledger first: above the fold at 1024 × 768
    presets.preset_menu(st)
    serving.sidebar_notice()  # where the lab is served: this machine only, or the network
    st.toggle(
        "Reproducible demo seed (teaching data only, not for production)",
        key="demo_seed",
        help="Reproducible, not for production: on teaching data every random draw (split, teachers, noise) "
        "comes from one public seed, so a lecture's numbers repeat. A real job (an upload or a two-file job) "
        "always draws its noise, estimates and selections from the operating system, whatever this switch: "
        "noise drawn from a public seed could be recomputed by anyone. A seed is never written to an export.",
    )
    st.caption("Demo seed on: runs on teaching data repeat exactly; a real job's noise still comes from the "
               "operating system. Not for production." if session.demo_mode()
               else "All randomness comes from the operating system.")
    st.toggle("Projector", key=style.PROJECTOR_KEY,
              help="For a room: larger type, thicker lines, big ⊥ and wrong-answer markers, and the ledger "
              "as a banner at the top of every page.")
    session.keep_toggles()
    data_box = st.container()
    privacy_box = st.container()

style.apply_css()
ledger_banner = st.container() if style.projector() else None  # above the page: filled once the page has run
session.enter_page(page.url_path)
ledgers.begin_view()
lesson.banner()
presets.preset_note()
page.run()

if ledger_banner is not None:  # the projector's banner: the lesson's ledger line, or a real job's total
    summary = lesson.ledger_summary()
    if summary is not None:
        line = summary.text
    else:
        try:
            led = ledgers.ledger(datasets.dataset())
        except PrivateLabelLabError:
            line = None
        else:
            line = (f"Spent on this data: ε {ledgers.total_text(led.total(), led.budget)} over {len(led)} "
                    f"run{'s' if len(led) != 1 else ''}.")
    if line:
        ledger_banner.markdown(f'<div class="ledger-banner">{line}</div>', unsafe_allow_html=True)

# Filled after the page ran, so the summary shows the settings the page just applied.
with data_box:
    st.subheader("Dataset")
    try:
        ds = datasets.dataset()
    except PrivateLabelLabError as exc:
        ds = None
        st.caption(f"No dataset loaded: {literal(exc)}")
    else:
        st.markdown(
            f"**{literal(ds.title)}**  \n{ds.n_private} private rows · {ds.n_public} public queries · "
            f"{ds.n_classes} classes  \n"
            + ("**teaching split** (public queries drawn from the private file)" if ds.teaching_split
               else "two-file job (separate public file)")
            + f"  \nPrivacy unit: **{literal(ds.private.privacy_unit.describe())}**"
        )
        kind = session.data_kind(ds)
        st.markdown(session.KIND_TEXT[kind])
        if session.can_declare_teaching():
            with st.expander("Teaching data?" if kind == session.REAL else "Declared teaching data"):
                if kind == session.REAL:
                    st.caption("An upload is a real job. If it holds nobody's private data, you may declare it "
                               "teaching data: everything then runs live and counts on your own ledger.")
                    sure = st.checkbox(session.TEACHING_DECLARATION, key="teaching_declaration")
                    if st.button("Treat this upload as teaching data", key="declare_teaching", disabled=not sure):
                        session.declare_teaching(True)
                        st.rerun()
                else:
                    st.caption("You confirmed that this upload holds nobody's private data.")
                    if st.button("Treat it as a real job again", key="undeclare_teaching"):
                        session.declare_teaching(False)
                        st.rerun()
        if kind == session.TEACHING:
            lesson.sidebar(ds, ledger_box)
        elif ledgers.job_name(ds) is None:
            st.caption("Spent on this data: not known until you name it (Private labeling page): its budget is "
                       "kept under that name.")
        else:
            led = ledgers.ledger(ds)
            budget = led.budget
            st.caption(f"Spent on this data: ε {ledgers.total_text(led.total(), budget)} over {len(led)} "
                       f"run{'s' if len(led) != 1 else ''}" + (" (no budget set yet)" if budget is None else "")
                       + f" · its ledger: {ledgers.job_name(ds)}.")
with privacy_box:
    st.subheader("Privacy settings")
    st.markdown(widgets.privacy_summary(None if ds is None else ds.n_public))
