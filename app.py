"""Private Label Lab: the Streamlit entry point (navigation and the shared sidebar only).

Run with ``make run`` (or ``streamlit run app.py``).  The pages live in ``pages/``;
``pages/_state.py`` holds the list of pages (``PAGES``) and the session state
and caches they share.
"""

from __future__ import annotations

import streamlit as st

from core.errors import PrivateLabelLabError
from pages import _state as state

st.set_page_config(page_title="Private Label Lab", page_icon="🔏", layout="wide")

state.init()
page = st.navigation(
    [
        st.Page(path, title=title, icon=icon, default=(i == 0))
        for i, (path, title, icon) in enumerate(state.app_pages())
    ]
)

with st.sidebar:
    st.toggle(
        "Reproducible demo seed (reproducible, not for production)",
        key="demo_seed",
        help="Reproducible, not for production: fixes every random draw (split, teachers, noise) "
        "to one public seed. Off, all randomness comes from the operating system. "
        "A seed is never written to an export.",
    )
    st.caption("Demo seed on: runs repeat exactly. Not for production." if state.demo_mode()
               else "All randomness comes from the operating system.")
    data_box = st.container()
    privacy_box = st.container()

state.enter_page(page.url_path)
st.session_state["_in_app"] = True  # pages check it (pages/_state.run_through_app)
try:
    page.run()
finally:
    st.session_state.pop("_in_app", None)

# Filled after the page ran, so the summary shows the settings the page just applied.
with data_box:
    st.subheader("Dataset")
    try:
        ds = state.dataset()
    except PrivateLabelLabError as exc:
        st.caption(f"No dataset loaded: {exc}")
    else:
        st.markdown(
            f"**{ds.title}**  \n{ds.n_private} private rows · {ds.n_public} public queries · "
            f"{ds.n_classes} classes"
        )
with privacy_box:
    st.subheader("Privacy settings")
    p = state.privacy()
    st.markdown(state.privacy_summary(p))
