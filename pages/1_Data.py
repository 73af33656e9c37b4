"""Data: a bundled dataset, a generator, or an uploaded private CSV (+ optional public CSV)."""

from __future__ import annotations

import streamlit as st

from pages import _session as session
from pages import _cache as cache
from pages import _widgets as widgets

session.run_through_app()
session.init()
ss = st.session_state
_SOURCE_LABELS = {"bundled": "Bundled dataset", "generator": "Generator", "upload": "Upload CSV"}
ss.setdefault("data_ui", {"source": _SOURCE_LABELS[session.DEFAULT_DATA["source"]], "name": session.DEFAULT_DATASET,
                          "generator": session.DEFAULT_GENERATOR, "n": session.DEFAULT_DATA.get("n", 5000),
                          "public_fraction": session.DEFAULT_DATA["public_fraction"],
                          "test_fraction": session.DEFAULT_DATA["test_fraction"], "missing": "refuse"})

st.title("Data")
st.markdown(
    "Private prediction starts from two sets. The **private** set $D$ has $n$ labeled rows that must "
    "stay secret; it is cut into $k$ disjoint chunks, and one *teacher* model is trained on each chunk. "
    "The **public** set $Q$ holds $m$ unlabeled rows (the *queries*): the teachers vote on them and a "
    "differentially private mechanism turns the votes into labels that are safe to publish."
)
st.latex(r"D = D_1 \cup \dots \cup D_k,\quad |D_j| \approx n/k, \qquad Q = \{x_1, \dots, x_m\}")
# Filled at the end of the page (after the data below is loaded): the result comes first.
result_box = st.container(border=True)

SOURCES = ["Bundled dataset", "Generator", "Upload CSV"]
source = st.radio("Where does the data come from?", SOURCES, horizontal=True, key=session.widget_key("data_ui", "source"))
session.remember("data_ui", "source", source)

with st.expander("Split sizes", expanded=False):
    st.caption(
        "Bundled and generated data (and an upload without a public file) are split at random: "
        "a share becomes the public queries (their true labels are kept aside for diagnostics only), "
        "a share is held out to test the student, the rest is private."
    )
    st.latex(r"m = \text{public share}\times N,\qquad n_{\text{test}} = \text{test share}\times N,"
             r"\qquad n = N - m - n_{\text{test}}\ \text{private rows}")
    c1, c2 = st.columns(2)
    pf = c1.slider("Public share", 0.05, 0.6, step=0.05, key=session.widget_key("data_ui", "public_fraction"))
    tf = c2.slider("Held-out test share", 0.05, 0.4, step=0.05, key=session.widget_key("data_ui", "test_fraction"))
    session.remember("data_ui", "public_fraction", pf)
    session.remember("data_ui", "test_fraction", tf)

active = dict(ss["data_cfg"])
wanted = None

if source == "Bundled dataset":
    from core.data import bundled_names

    names = bundled_names()
    if ss["data_ui"]["name"] not in names:
        ss["data_ui"]["name"] = names[0]
    name = st.selectbox("Dataset", names, key=session.widget_key("data_ui", "name"))
    session.remember("data_ui", "name", name)
    wanted = {"source": "bundled", "name": name, "public_fraction": pf, "test_fraction": tf}

elif source == "Generator":
    from core.data import GENERATORS

    gen_names = list(GENERATORS)
    if ss["data_ui"]["generator"] not in gen_names:
        ss["data_ui"]["generator"] = gen_names[0]
    gen = st.selectbox("Generator", gen_names, format_func=lambda g: GENERATORS[g].get("label", g),
                       key=session.widget_key("data_ui", "generator"))
    session.remember("data_ui", "generator", gen)
    spec = GENERATORS[gen]
    st.caption(widgets.generator_description(spec))
    n_spec = spec["n"]
    ss["data_ui"]["n"] = min(max(int(ss["data_ui"]["n"]), int(n_spec["min"])), 200_000)
    n = st.number_input(n_spec.get("label", "Rows n"), min_value=int(n_spec["min"]), max_value=200_000, step=500,
                        key=session.widget_key("data_ui", "n"), help=n_spec.get("help"))
    session.remember("data_ui", "n", int(n))
    params = {}
    pcols = st.columns(3)
    for i, p in enumerate(widgets.generator_parameters(spec)):
        params[p["name"]] = widgets.generator_widget(pcols[i % 3], f"gen_{gen}", p)
    wanted = {"source": "generator", "name": gen, "n": int(n), "params": params,
              "public_fraction": pf, "test_fraction": tf}

else:
    st.markdown(
        "Upload a **private labeled CSV** (a header row; one column holds the label). Optionally upload a "
        "**public unlabeled CSV** with the same feature columns; without it, a public share is drawn from "
        "the private file. Files stay in this session's memory and are never written to disk."
    )
    up_private = st.file_uploader("Private labeled CSV", type=["csv", "txt"], key="upload_private")
    up_public = st.file_uploader("Public unlabeled CSV (optional)", type=["csv", "txt"], key="upload_public")
    missing = st.radio(
        "Missing values", ["refuse", "impute"], horizontal=True, key=session.widget_key("data_ui", "missing"),
        help="refuse: a missing value is an error; impute: fill with the column's median (numbers) "
        "or most frequent value (categories) inside each model's pipeline.",
    )
    session.remember("data_ui", "missing", missing)
    if up_private is not None:
        ph = cache.keep_upload(up_private)
        pubh = cache.keep_upload(up_public) if up_public is not None else None
        # The label-column box lists the file's columns once it has loaded; its value from the
        # previous run (kept under its key) is read before the box is drawn, so a new choice
        # reloads the data on the same run and the box appears on the run the file loads.
        box_key = f"label_column_{ph[:16]}"
        columns = ss.setdefault("_upload_columns", {}).get(ph)
        label_column = None
        if columns is not None and ss.get(box_key) not in (None, columns[0]):
            label_column = ss[box_key]
        wanted = {"source": "upload", "private_hash": ph, "public_hash": pubh, "filename": up_private.name,
                  "label_column": label_column, "missing": missing, "public_fraction": pf, "test_fraction": tf}
        if wanted != active:
            ds_new = cache.try_dataset(wanted)
            if ds_new is not None:
                cache.drop_uploads({h for h in (ph, pubh) if h})
                if columns is None:  # first load: the detected label column, then the features
                    columns = [ds_new.private.label_column, *ds_new.private.features.columns]
                    ss["_upload_columns"] = {ph: columns}
        wanted = None  # handled here
        active = dict(ss["data_cfg"])
        if columns is not None and active.get("source") == "upload" and active.get("private_hash") == ph:
            st.selectbox(
                "Label column", columns, index=0, key=box_key,
                help="The column that holds the class of each private row; the others are features. "
                "The first entry is the column detected automatically.",
            )
    else:
        st.info("No private file uploaded yet: the data below is still the previously loaded dataset.")

if wanted is not None and wanted != active:
    cache.try_dataset(wanted)

with session.shown_errors():
    ds = cache.dataset()

    st.subheader(f"Loaded: {ds.title}")
    c = st.columns(5)
    c[0].metric("Private rows (n)", ds.n_private)
    c[1].metric("Public queries (m)", ds.n_public)
    c[2].metric("Held-out test rows", ds.n_test)
    c[3].metric("Classes", ds.n_classes)
    c[4].metric("Features", len(ds.private.features.columns))
    st.caption(ds.public_note)
    st.markdown(f"Label column **{ds.private.label_column}**; classes: " + ", ".join(f"`{c}`" for c in ds.class_names))
    tab_priv, tab_pub = st.tabs(["Private rows (preview)", "Public queries (preview)"])
    with tab_priv:
        st.dataframe(cache.preview(ds.private), height=240)
    with tab_pub:
        st.dataframe(ds.public_X.head(20), height=240)


with result_box, session.shown_errors():
    ds = cache.dataset()
    st.subheader("Result with the current settings")
    ens = cache.ensemble()
    result, _ = cache.labeling()
    m = st.columns([1, 1, 1, 1.7])
    m[0].metric("Answered", result.n_answered, help="Public queries that received a private label.")
    m[1].metric("Abstained (⊥)", result.n_bottom, help="Queries the mechanism refused to label.")
    m[2].metric("Not processed", result.n_unprocessed,
                help="Queries after the mechanism stopped (its budget of ⊥ was used up).")
    m[3].metric("Guarantee", f"ε = {result.epsilon:.3g}, δ = {result.delta:.2g}")
    cache.show_spent(st, ds, ens=ens)
    st.caption(
        f"{widgets.mechanism_title(result.mechanism)} · ensemble of {ens.teachers.k} teachers "
        f"({widgets.learner_label(ss['ensemble_cfg']['learner'])}) on {ds.title}. "
        f"{result.n_answered:,} of the {result.m:,} public queries received a label that is safe to publish: "
        "together they are (ε, δ)-differentially private. The teachers are trained once and cached; "
        "every step can be changed on its page."
    )
    # Links to the pipeline's next pages (the Privacy audit stands apart), as app.py registers them.
    targets = [t for t in session.app_pages() if t[0] not in ("pages/1_Data.py", "pages/8_Privacy_audit.py")]
    for col, (path, label, icon) in zip(st.columns(len(targets)), targets):
        col.page_link(path, label=label, icon=icon)
