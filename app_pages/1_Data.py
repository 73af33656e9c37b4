"""Data: a two-file job (a private labeled file + a separate public file), a bundled
dataset, a generator, or uploads; the feature columns, missing values and how many
public rows to label."""

from __future__ import annotations

import dataclasses
import hashlib

import pandas as pd
import streamlit as st

from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _spend as spending
from app_pages import _widgets as widgets
from app_pages import _serving as serving
from app_pages._text import app_words, literal
from core.data import CLASSES_READ_NOTE, default_features, two_file_problems
from core.data.problems import PROBLEM_KINDS

session.init()
ss = st.session_state
_SOURCE_LABELS = {"bundled": "Bundled dataset", "generator": "Generator", "upload": "Upload CSV",
                  "job": "Bundled two-file job"}
ss.setdefault("data_ui", {"source": _SOURCE_LABELS[session.DEFAULT_DATA["source"]], "name": session.DEFAULT_DATASET,
                          "generator": session.DEFAULT_GENERATOR, "n": session.DEFAULT_DATA.get("n", 5000),
                          "public_fraction": session.DEFAULT_DATA["public_fraction"],
                          "test_fraction": session.DEFAULT_DATA["test_fraction"], "missing": "refuse"})
ss["data_ui"].setdefault("job", next(iter(datasets.JOBS)))
ss["data_ui"].setdefault("job_missing", "drop")
ss["data_ui"].setdefault("markers", True)
ss["data_ui"].setdefault("rename_duplicates", False)
ss["data_ui"].setdefault("privacy_unit", "each row (no unit column)")
ss["data_ui"].setdefault("drop_empty_columns", False)
ss["data_ui"].setdefault("drop_before", [])
DETECT = "detect"
ss["data_ui"].setdefault("sep", DETECT)
ss["data_ui"].setdefault("decimal", DETECT)
ss["data_ui"].setdefault("encoding", "UTF-8")

KIND_TITLES = {
    "label": "label column", "duplicate_header": "duplicate names", "empty_column": "empty column",
    "missing_values": "missing values", "not_numbers": "text in a number column", "identifier": "identifier",
    "survey_weight": "survey weight", "free_text": "free text", "date": "dates",
    "label_stand_in": "stand-in for the label (NON-PRIVATE diagnostic)",
    "person_key": "a person key (NON-PRIVATE diagnostic)", "duplicate_rows": "exact copies (NON-PRIVATE diagnostic)",
}
EACH_ROW = "each row (no unit column)"
UI_SETTING = {"rename_duplicates": "rename_duplicates", "drop_empty_columns": "drop_empty_columns"}


def apply_fix(action: str, columns: tuple, value, cols_key: str | None, missing_key: str,
              upload: str | None = None) -> None:
    """A fix's button (a callback: it runs before the page is drawn again).

    ``keep_column`` keeps a column that is left out of the features by default (a flagged
    identifier, survey weight or label stand-in); ``leave_out`` undoes it.  On an upload the
    choice is remembered for the file (``upload``: its hash), since its left-out columns are
    taken out before it loads; otherwise it edits the feature box.
    """
    ui = ss["data_ui"]
    if action in UI_SETTING:
        ui[action] = True
        ss[f"w_data_ui_{action}"] = True
    elif action == "missing":
        ui[missing_key] = value
        ss[f"w_data_ui_{missing_key}"] = value
    elif action == "privacy_unit":  # declare the column the unit: a guarantee per person, the column kept out
        ui["privacy_unit"] = columns[0]
        ss["w_data_ui_privacy_unit"] = columns[0]
    elif action in ("keep_column", "leave_out") and upload is not None:
        kept = ss.setdefault("_keep_columns", {}).setdefault(upload, [])
        for c in columns:
            if action == "keep_column" and c not in kept:
                kept.append(c)
            elif action == "leave_out" and c in kept:
                kept.remove(c)
    elif action == "keep_column":
        if cols_key is not None and cols_key in ss:
            ss[cols_key] = [*ss[cols_key], *[c for c in columns if c not in ss[cols_key]]]
    elif action in ("drop_column", "leave_out"):
        if cols_key is not None and cols_key in ss:
            ss[cols_key] = [c for c in ss[cols_key] if c not in columns]
        else:  # before the file loads: leave the columns out of it
            ui["drop_before"] = sorted({*ui.get("drop_before", []), *columns})


def merged(full, final):
    """The column findings of ``full`` (every column) with the problems that block loading from
    ``final`` (the columns left out by default taken out first): one list to show."""
    problems = [p for p in full.problems if not p.blocking] + [p for p in final.problems if p.blocking]
    return dataclasses.replace(full, problems=tuple(sorted(problems, key=lambda p: PROBLEM_KINDS.index(p.kind))))


def show_check(check, cols_key: str | None, missing_key: str, title: str = "Column check", *, choice=None,
               upload: str | None = None, one_file: bool = False) -> None:
    """Every problem of the column check at once, each with its one-click fixes.

    A column left out of the features by default (``choice``: the default features) offers
    "Keep it as a feature"; one kept on request offers "Leave it out".  An upload without a
    public file (``one_file``) is not offered "drop" for its missing values: a one-file job
    refuses it (``core.data.check_one_file_queries``).  On an uploaded (private) file
    (``upload``), a column that a check of the private rows left out says so in
    capitals (``core.data.FEATURES_READ_NOTE``, docs/design.md §1.3).
    """
    st.markdown(f"**{title}**")
    if choice is not None and (choice.left_out or choice.kept):
        how = ("" if not choice.left_out else " Each has its Keep button below." if upload is not None else
               " Keep one with its button below, or add it back in the box above.")
        st.info(literal(choice.sentence()) + how)
    if choice is not None and choice.left_by_private and upload is not None:
        st.warning(app_words(choice.statement) + ".")
    kept = set() if choice is None else {c.column for c in choice.kept}
    where_ = hashlib.sha256(title.encode()).hexdigest()[:6]  # a check not loaded yet is shown beside the loaded one's
    for i, p in enumerate(check.problems):
        where = ", ".join(f"**{literal(c)}**" for c in p.columns[:6]) + (" …" if len(p.columns) > 6 else "")
        say = st.error if p.blocking else st.warning
        say((f"{where} ({KIND_TITLES[p.kind]}): " if where else f"{KIND_TITLES[p.kind].capitalize()}: ")
            + literal(p.sentence))
        fixes = [f for f in p.fixes if f.action != "choose_label"]
        if one_file and any(f.action == "missing" and f.value == "drop" for f in fixes):
            from core.data import ONE_FILE_DROP

            fixes = [f for f in fixes if not (f.action == "missing" and f.value == "drop")]
            st.caption(literal(ONE_FILE_DROP))
        fixes = [dataclasses.replace(f, action="leave_out") if f.action == "keep_column" and set(f.columns) <= kept
                 else f for f in fixes]
        if fixes:
            for col, (j, fix) in zip(st.columns(max(len(fixes), 3)), enumerate(fixes)):
                title_ = fix.title if fix.action != "leave_out" else (
                    "Leave " + ", ".join(f"'{c}'" for c in fix.columns) + " out of the features")
                col.button(literal(title_), key=f"fix_{where_}_{i}_{j}_{p.kind}_{'_'.join(p.columns)[:40]}",
                           on_click=apply_fix, args=(fix.action, fix.columns, fix.value, cols_key, missing_key, upload))
    if any(p.non_private for p in check.problems):
        st.caption("The stand-in, person-key and copy checks read the private rows: non-private diagnostics for you, "
                   "the data's owner, shown here only and never exported.")
    st.caption(literal(check.summary()))


TEACHING_SPLIT = (
    "**Teaching split**: the public queries are a random split of the private file, so they are private "
    "rows themselves. Good for learning how the lab works; for a real job give a separate public file "
    "(Upload CSV with both files, or the bundled two-file job). The export of a teaching split leaves the "
    "features out unless you confirm that these rows may be published."
)
IMPUTE_WHERE = (
    "Imputation is fitted inside each teacher's pipeline, on that teacher's chunk only (median for numbers, "
    "most frequent value for categories): never on all private rows at once."
)
MISSING_HELP = {
    "drop": "drop: rows with a missing value are left out (counted below; not on an upload without a public file, "
            "whose queries are its own rows)",
    "impute": "impute: keep them; each teacher fills them in from its own chunk",
    "refuse": "refuse: a missing value is an error",
}
# The number of teachers a ready two-file job starts with (Adult: about 108 private rows each).
# (Comments, not strings: a bare string in a page is shown on it.)
JOB_TEACHERS = 250
# The Data page trains the ensemble by itself only on generated or small bundled data (a demo);
# an upload or a two-file job waits for the Train button of the Ensemble page.
AUTO_TRAIN_ROWS = 20_000

st.title("Data")
st.markdown(
    "Private prediction starts from two sets. The **private** set $D$ has $n$ labeled rows that must "
    "stay secret; it is cut into $k$ disjoint chunks, and one *teacher* model is trained on each chunk. "
    "The **public** set $Q$ holds $m$ unlabeled rows (the *queries*): the teachers vote on them and a "
    "differentially private mechanism turns the votes into labels that are safe to publish. A real job "
    "takes **two files**: the private labeled file and a separate public file of rows to label."
)
st.latex(r"D = D_1 \cup \dots \cup D_k,\quad |D_j| \approx n/k, \qquad Q = \{x_1, \dots, x_m\}")
# Filled at the end of the page (after the data below is loaded): the result comes first.
result_box = st.container(border=True)

SOURCES = ["Bundled dataset", "Bundled two-file job", "Generator", "Upload CSV"]
source = st.radio("Where does the data come from?", SOURCES, horizontal=True, key=session.widget_key("data_ui", "source"),
                  help="Bundled dataset and Generator make a teaching split of one file; the two-file job and an "
                  "upload with a public file keep the public rows apart from the private ones.")
session.remember("data_ui", "source", source)

with st.expander("Split sizes", expanded=False):
    st.caption(
        "A teaching split (bundled and generated data, an upload without a public file) is split at random: "
        "a share becomes the public queries (their true labels are kept aside for diagnostics only), "
        "a share is held out to test the student, the rest is private. A two-file job only holds out the "
        "test share of the private file."
    )
    st.latex(r"\begin{gathered} m = \text{public share}\times N,\qquad n_{\text{test}} = \text{test share}\times N,"
             r"\\ n = N - m - n_{\text{test}}\ \text{private rows} \end{gathered}")
    c1, c2 = st.columns(2)
    pf = c1.slider("Public share", 0.05, 0.6, step=0.05, key=session.widget_key("data_ui", "public_fraction"))
    tf = c2.slider("Held-out test share", 0.05, 0.4, step=0.05, key=session.widget_key("data_ui", "test_fraction"))
    session.remember("data_ui", "public_fraction", pf)
    session.remember("data_ui", "test_fraction", tf)


def missing_controls(section_key: str, options: list[str]) -> tuple[str, list[str]]:
    """The missing-value choice (drop / impute / refuse) and the "treat '?' as missing" box."""
    st.markdown("**Missing values**")
    c1, c2 = st.columns([2, 1])
    choice = c1.radio("Rows with a missing value", options, horizontal=True, format_func=lambda o: o,
                      key=session.widget_key("data_ui", section_key),
                      help=" · ".join(MISSING_HELP[o] for o in options))
    session.remember("data_ui", section_key, choice)
    markers = c2.checkbox("Treat '?' as missing", key=session.widget_key("data_ui", "markers"),
                          help="UCI-style files write a missing value as '?'. Off, '?' is an ordinary category.")
    session.remember("data_ui", "markers", bool(markers))
    st.caption(MISSING_HELP[choice] + ". " + IMPUTE_WHERE)
    return choice, (["?"] if markers else [])


active = dict(ss["data_cfg"])
wanted = None

if source == "Bundled dataset":
    from core.data import bundled_names

    names = bundled_names()
    if ss["data_ui"]["name"] not in names:
        ss["data_ui"]["name"] = names[0]
    name = st.selectbox("Dataset", names, key=session.widget_key("data_ui", "name"))
    session.remember("data_ui", "name", name)
    st.caption("A teaching split: the public queries are drawn from the same file.")
    wanted = {"source": "bundled", "name": name, "public_fraction": pf, "test_fraction": tf}

elif source == "Bundled two-file job":
    jobs = list(datasets.JOBS)
    job = st.selectbox("Two-file job", jobs, format_func=lambda j: datasets.JOBS[j]["title"],
                       key=session.widget_key("data_ui", "job"))
    session.remember("data_ui", "job", job)
    st.caption("A real job, ready made: the private labeled file and a separate public file whose features "
               "are labeled and exported (its own labels are kept aside for non-private diagnostics only).")
    missing, markers = missing_controls("job_missing", ["drop", "impute", "refuse"])
    wanted = {"source": "job", "name": job, "missing": missing, "missing_markers": markers,
              "public_fraction": pf, "test_fraction": tf}

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
        "A real job takes **two files**. Files stay in this session's memory and are never written to disk."
    )
    up_private = up_public = None
    if serving.upload_gate():  # a network server takes a private file only with its password
        u1, u2 = st.columns(2)
        with u1:
            st.markdown("**1. Private labeled file** (stays secret: only the teachers see it)")
            up_private = st.file_uploader("Private labeled CSV", type=["csv", "txt"], key="upload_private",
                                          help="A header row; one column holds the label.")
        with u2:
            st.markdown("**2. Public file to label** (its rows are labeled and published)")
            up_public = st.file_uploader("Public unlabeled CSV (optional)", type=["csv", "txt"], key="upload_public",
                                         help="The same feature columns, no label. Without it the public rows are a "
                                         "teaching split of the private file.")
    if ss["data_ui"]["missing"] not in ("refuse", "impute", "drop"):
        ss["data_ui"]["missing"] = "refuse"
    missing, markers = missing_controls("missing", ["refuse", "impute", "drop"])
    f1, f2 = st.columns(2)
    rename_dups = f1.checkbox("Rename duplicate column names (a, a.2, a.3)", key=session.widget_key("data_ui", "rename_duplicates"),
                              help="Instead of refusing a file whose header repeats a name.")
    session.remember("data_ui", "rename_duplicates", bool(rename_dups))
    drop_empty = f2.checkbox("Drop columns empty in every row", key=session.widget_key("data_ui", "drop_empty_columns"),
                             help="Instead of refusing a file with an all-empty column.")
    session.remember("data_ui", "drop_empty_columns", bool(drop_empty))
    with st.expander("File format: separator, decimal mark, encoding"):
        st.caption("The separator (comma, semicolon or tab) and the decimal mark (a comma only in a file separated by "
                   "semicolons or tabs) are detected from each file; set them here if the columns look wrong. Text "
                   "is read as UTF-8 unless you choose another encoding (a file saved by an older Windows program is "
                   "often latin-1 or cp1252).")
        g1, g2, g3 = st.columns(3)
        sep = g1.selectbox("Separator", [DETECT, ",", ";", "tab"], key=session.widget_key("data_ui", "sep"))
        decimal = g2.selectbox("Decimal mark", [DETECT, ".", ","], key=session.widget_key("data_ui", "decimal"))
        encoding = g3.selectbox("Encoding", ["UTF-8", "latin-1", "cp1252"], key=session.widget_key("data_ui", "encoding"))
        for name, value in (("sep", sep), ("decimal", decimal), ("encoding", encoding)):
            session.remember("data_ui", name, value)
    csv_format = (None if sep == DETECT else sep, None if decimal == DETECT else decimal,
                  None if encoding == "UTF-8" else encoding)
    if up_private is not None:
        ph = datasets.keep_upload(up_private)
        pubh = datasets.keep_upload(up_public) if up_public is not None else None
        # The label column is the user's choice; a column named label, target, y or class is
        # offered as a suggestion (said so), and no column is ever taken for its position.
        box_key = f"label_column_{ph[:16]}"
        wanted = {"source": "upload", "private_hash": ph, "public_hash": pubh, "filename": up_private.name,
                  "public_filename": None if up_public is None else up_public.name,
                  "label_column": ss.get(box_key), "missing": missing, "missing_markers": markers,
                  "public_fraction": pf, "test_fraction": tf, "rename_duplicates": bool(rename_dups),
                  "drop_empty_columns": bool(drop_empty), "drop_before": list(ss["data_ui"]["drop_before"]),
                  "csv_format": csv_format}
        upload_check = None
        with session.shown_errors():
            upload_check = datasets.upload_check(wanted)
        if upload_check is None:
            wanted = None
        else:
            columns = list(upload_check.columns)
            suggested = upload_check.suggested_label
            if ss.get(box_key) not in columns:
                ss.pop(box_key, None)
                if suggested is not None:
                    ss[box_key] = suggested
            label_column = st.selectbox(
                "Label column", columns, index=None, key=box_key, placeholder="Choose the label column",
                help="The column that holds the class of each private row; the others are features.")
            if label_column is not None and label_column == suggested:
                st.caption(f"**{literal(suggested)}** is suggested by its name; choose another column if it does "
                           "not hold the classes.")
            elif label_column is None:
                st.info("Choose the label column to load the file: it is never guessed."
                        + (f" Suggested by its name: **{literal(suggested)}**." if suggested else ""))
            wanted["label_column"] = label_column
            # The privacy unit: the column naming each row's person (every guarantee then per person).
            unit_options = [EACH_ROW] + [c for c in columns if c != label_column]
            if ss["data_ui"].get("privacy_unit") not in unit_options:
                ss["data_ui"]["privacy_unit"] = EACH_ROW
                ss.pop("w_data_ui_privacy_unit", None)
            unit_choice = st.selectbox(
                "Privacy unit", unit_options, key=session.widget_key("data_ui", "privacy_unit"),
                help="Whom the guarantee protects. 'Each row' protects one row; a column naming the person (an ID) "
                     "protects all of a person's rows together: every teacher then holds whole persons, the "
                     "DP-trained models use at most a set number of rows per person, and the column is never a "
                     "feature. Choose it when a person can have several rows.")
            session.remember("data_ui", "privacy_unit", unit_choice)
            wanted["privacy_unit"] = None if unit_choice == EACH_ROW else unit_choice
            # The class list, declared (public by construction) or read from the file (docs/design.md §1.3).
            declared = st.text_input(
                "Declared classes", key=session.widget_key_for("data_ui", "class_names", ""),
                placeholder="e.g. <=50K, >50K (empty: read from the file)",
                help="The classes, comma separated, in the order the labels and the student use. Declared, the "
                     "class list is public by construction: a row with another label is a row without a label "
                     "(dropped under Missing values: drop, refused otherwise), a class with no row is kept. Empty: the "
                     "classes are read from the private file and treated as public, so a class held by a few "
                     "persons reveals that they are in the data.")
            session.remember("data_ui", "class_names", declared)
            names = [n.strip() for n in declared.split(",")] if declared.strip() else []
            if names:
                wanted["class_names"] = names
            upload_choice = None
            if label_column is not None:
                # Identifiers, survey weights and label stand-ins are left out of the features by default
                # (core.data.default_features), before the file loads, unless kept with their button.
                wanted["keep"] = list(ss.setdefault("_keep_columns", {}).get(ph, []))
                full_check = datasets.upload_check(wanted)
                with session.shown_errors():
                    full_check, upload_choice = datasets.column_choice(wanted)
                left = list(upload_choice.dropped) if upload_choice is not None else []
                wanted["left_out"] = left
                upload_check = merged(full_check, datasets.upload_check(wanted, tuple(left)))
                public_check = datasets.public_check(wanted, full_check) if upload_choice is not None else None
                if public_check is not None:  # a two-file job: the public file's findings choose (§1.3)
                    upload_check = dataclasses.replace(upload_check,
                                                       problems=two_file_problems(upload_check, public_check))
            if label_column is None or upload_check.blocking or (label_column is not None and upload_choice is None):
                show_check(upload_check, None, "missing", f"Column check of {literal(up_private.name)} (not loaded yet)",
                           choice=upload_choice, upload=ph, one_file=up_public is None)
                wanted = None
    else:
        st.info("No private file uploaded yet: the data below is still the previously loaded dataset.")


def ds_cfg_is_upload(cfg: dict) -> bool:
    return cfg.get("source") == "upload" and cfg.get("private_hash") in ss.get("_uploads", {})


def _base(cfg: dict) -> dict:
    return {k: v for k, v in cfg.items() if k not in ("drop_columns", "n_label")}


cols_key = n_key = None
if wanted is not None:
    # The column choice and the number of public rows to label belong to one loaded file
    # (one base configuration); their boxes are drawn below, once the data has loaded, and
    # their values from the previous run are read here so that a change reloads at once.
    sig = hashlib.sha256(repr(sorted(_base(wanted).items())).encode()).hexdigest()[:16]
    cols_key, n_key = f"keep_columns_{sig}", f"n_label_{sig}"
    same_base = _base(active) == _base(wanted)
    all_cols, total = ss.setdefault("_data_shape", {}).get(sig, (None, None))
    if cols_key in ss and all_cols is not None:
        drop = [c for c in all_cols if c not in ss[cols_key]]
    elif same_base:
        drop = list(active.get("drop_columns", []))
    elif wanted["source"] == "upload":
        drop = []  # its default left-out columns are taken out before it loads (wanted["left_out"])
    else:  # a new table: identifiers, survey weights and stand-ins are not features by default
        drop = []
        with session.shown_errors():
            choice = datasets.column_choice(wanted)[1]
            drop = [] if choice is None else list(choice.dropped)  # None: a wide table checked on a click
    if n_key in ss:
        n_label = int(ss[n_key])
    elif same_base:
        n_label = active.get("n_label")
    else:
        n_label = 2_000 if wanted["source"] == "job" else None
    if n_label is not None and total is not None and n_label >= total:
        n_label = None
    if drop:
        wanted["drop_columns"] = sorted(drop)
    if n_label:
        wanted["n_label"] = int(n_label)
    if wanted != active:
        ds_new = datasets.try_dataset(wanted)
        if ds_new is not None and wanted["source"] == "job" and _base(active) != _base(wanted):
            ss["ensemble_cfg"] = {**ss["ensemble_cfg"], "k": JOB_TEACHERS}
            if "ens_ui" in ss:
                ss["ens_ui"]["k"] = JOB_TEACHERS
            ss.pop("w_ens_ui_k", None)
            st.info(f"Number of teachers set to k = {JOB_TEACHERS} for this job (about "
                    f"{ds_new.n_private // JOB_TEACHERS} private rows each); change it on the Ensemble page.")
        if ds_new is not None and wanted["source"] == "upload":
            datasets.drop_uploads({h for h in (wanted["private_hash"], wanted["public_hash"]) if h})
        if ds_new is None and wanted["source"] == "upload":  # its fixes (a unit to declare, a column to drop) in reach
            lacks = list(ss.get("_public_lacks", ()))  # feature columns the public file lacks: drop them
            if lacks:
                st.button(literal("Drop " + ", ".join(f"'{c}'" for c in lacks)), key="fix_public_lacks",
                          on_click=apply_fix, args=("drop_column", lacks, None, None, "missing", wanted["private_hash"]))
            with session.shown_errors():
                show_check(datasets.upload_check(wanted), None, "missing",
                           f"Column check of {literal(wanted['filename'])} (not loaded)",
                           one_file=not wanted.get("public_hash"))
    active = dict(ss["data_cfg"])
    if _base(active) != _base(wanted):
        cols_key = n_key = None  # the wanted data did not load: its boxes are not shown


with session.shown_errors():
    ds = datasets.dataset()

    st.subheader(f"Loaded: {literal(ds.title)}")
    c = st.columns(3) + st.columns(3)  # two rows: the labels fit a 1024-px window
    c[0].metric("Private rows (n)" if ds.private.privacy_unit.per_row else "Private persons (n)", ds.n_private)
    c[1].metric("Public queries (m)", ds.n_public)
    c[2].metric("Held-out test rows", ds.n_test)
    c[3].metric("Classes", ds.n_classes)
    c[4].metric("Features", len(ds.private.features.columns))
    unit = ds.private.privacy_unit
    st.markdown(f"**Privacy unit:** {literal(unit.describe())}" + (
        " — every guarantee holds per person: all of a person's rows are under one teacher, the held-out and "
        "public splits keep persons whole (the largest number of rows is read from the private rows: for you only)."
        if not unit.per_row else " — each guarantee protects one row; declare a person column on an upload when a "
        "person can have several rows."))
    if ds.teaching_split:
        st.warning(TEACHING_SPLIT)
    else:
        st.success("**Two-file job**: the public rows come from a separate public file; the export writes that "
                   "file's features with the private labels.")
    st.caption(ds.public_note)
    st.markdown(f"Label column **{literal(ds.private.label_column)}**; classes"
                + (" (declared, public)" if ds.private.classes_declared else "") + ": "
                + ", ".join(f"**{literal(c)}**" for c in ds.class_names))
    if session.is_real_job(ds) and not ds.private.classes_declared:
        st.warning(CLASSES_READ_NOTE.replace("this report", "the privacy report"))
    if session.is_real_job(ds):
        spending.name_box(ds)  # a real job's ledger is its name's: asked once, here and before any run

    # ---- columns: choose the features (private and public alike), with warnings
    st.markdown("**Feature columns**")
    if cols_key is not None:
        ss["_data_shape"][sig] = (list(ds.all_columns), int(ds.extra.get("public_rows", ds.n_public)))
        if cols_key not in ss:
            ss[cols_key] = [c_ for c_ in ds.all_columns if c_ in ds.private.features.columns]
        st.multiselect("Feature columns used", list(ds.all_columns), key=cols_key,
                       help="Dropped columns are left out of the private rows, the test rows and the public rows.")
    # The findings of the features and of the columns left out by default (with their Keep buttons);
    # a column the user dropped from the box is not checked any more.
    cfg_now = ss["data_cfg"]
    features_now = set(ds.private.features.columns)
    dropped = tuple(c for c in ds.all_columns if c not in features_now)
    if ds.source == "upload" and ds_cfg_is_upload(cfg_now):
        _, choice = datasets.column_choice(cfg_now)
        left = tuple(cfg_now.get("left_out", ()))
        shown = merged(datasets.upload_check(cfg_now, dropped), datasets.upload_check(cfg_now, left + dropped))
        public_check = datasets.public_check(cfg_now, shown)
        if public_check is not None:  # a two-file job: the public file's findings choose (§1.3)
            shown = dataclasses.replace(shown, problems=two_file_problems(shown, public_check))
        show_check(shown, cols_key, "missing", choice=choice, upload=cfg_now["private_hash"],
                   one_file=not cfg_now.get("public_hash"))
    elif datasets.check_waits(ds):
        # A wide teaching table (MNIST's 784 pixels): checking every column takes seconds, so it
        # waits for a click instead of slowing the set's first opening.
        st.markdown("**Column check**")
        st.caption(f"{len(ds.private.features.columns):,} feature columns: each is checked on its own (seconds), "
                   "so the check runs when you ask.")
        if st.button("Check the columns", key="check_wide_table"):
            datasets.check_now(ds)
            st.rerun()
    else:  # the flagged columns the user put back in the feature box are kept on request
        full_check, _ = datasets.column_choice(cfg_now)
        choice = default_features(full_check, keep=[c for c in full_check.features if c in features_now])
        visible = features_now | set(choice.dropped)
        shown = dataclasses.replace(full_check, problems=tuple(
            p for p in full_check.problems if not p.columns or set(p.columns) & visible))
        show_check(shown, cols_key, "job_missing", choice=choice)

    # ---- missing values, where they are
    st.markdown("**Missing values** (non-private counts, for the data's owner)")
    t = ds.private
    counts = {col: n for col, n in t.missing_counts.items() if n}
    public_table = ds.extra.get("public_table")
    if counts or (public_table is not None and public_table.missing_rows):
        frame = pd.DataFrame({"column": list(t.missing_counts), "missing cells (private file)": list(t.missing_counts.values())})
        if public_table is not None:
            frame["missing cells (public file)"] = [public_table.missing_counts.get(col, 0) for col in frame["column"]]
        st.dataframe(frame[frame.iloc[:, 1:].sum(axis=1) > 0], hide_index=True)
        line = f"Private file: {t.missing_rows:,} rows with a missing value"
        line += f", {t.dropped_rows:,} dropped" if t.dropped_rows else f", kept ({t.missing})"
        if public_table is not None:
            line += f"; public file: {public_table.missing_rows:,} rows with a missing value"
            line += f", {public_table.dropped_rows:,} dropped" if public_table.dropped_rows else ""
        st.caption(line + ". " + IMPUTE_WHERE)
    else:
        markers = ", ".join(f"'{m_}'" for m_ in t.missing_markers) or "none besides empty cells"
        st.caption(f"No missing values (markers read as missing: {markers}).")

    # ---- how many public rows to label
    if n_key is not None:
        total = int(ds.extra.get("public_rows", ds.n_public))
        if n_key not in ss:
            ss[n_key] = int(ds.n_public)
        st.number_input(f"Public rows to label (of {total:,})", min_value=1, max_value=total, step=100, key=n_key,
                        help="The first N public rows are labeled, and ε is spent over these N queries. A student "
                        "rarely needs thousands of labels; fewer queries leave more budget per query.")

    tab_priv, tab_pub = st.tabs(["Private rows (preview)", "Public queries (preview)"])
    with tab_priv:
        st.dataframe(datasets.preview(ds.private), height=240)
    with tab_pub:
        st.dataframe(ds.public_X.head(20), height=240)


with result_box, session.shown_errors():
    ds = datasets.dataset()
    st.subheader("Result with the current settings")
    ens = cache.cached_ensemble(ds)
    auto = ds.source in ("generator", "bundled") and ds.n_private <= AUTO_TRAIN_ROWS
    if ens is None and not auto:
        cfg = ss["ensemble_cfg"]
        from core.data import check_class_sizes

        check_class_sizes(ds.private, int(cfg["k"]))  # a k this data cannot take is said now (shown_errors)
        st.info(f"**Not trained yet.** {ds.n_private:,} private rows and {ds.n_public:,} public queries are loaded; "
                f"the teachers ({cfg['k']} × {widgets.learner_label(cfg['learner'])}) are trained when you press "
                "**Train ensemble** on the Ensemble page, where you can choose the learner and k first.")
        st.page_link("app_pages/2_Ensemble.py", label="Ensemble: train the teachers", icon=":material/groups:")
    else:
        ens = cache.ensemble()
        result, _ = cache.labeling()
        m = st.columns(3)
        m[0].metric("Answered", result.n_answered, help="Public queries that received a private label.")
        m[1].metric("Abstained (⊥)", result.n_bottom, help="Queries the mechanism refused to label.")
        m[2].metric("Not processed", result.n_unprocessed,
                    help="Queries after the mechanism stopped (its budget of ⊥ was used up).")
        st.metric("Guarantee", f"ε = {result.epsilon:.4g}, δ = {result.delta:.3g}")  # a row of its own: it fits
        ledgers.show_spent(st, ds, ens=ens)
        st.caption(
            f"{widgets.mechanism_title(result.mechanism)} · ensemble of {ens.teachers.k} teachers "
            f"({widgets.learner_label(ss['ensemble_cfg']['learner'])}) on {literal(ds.title)}. "
            f"{result.n_answered:,} of the {result.m:,} public queries received a label that is safe to publish: "
            "together they are (ε, δ)-differentially private. The teachers are trained once and cached; "
            "every step can be changed on its page."
        )
        # Links to the pipeline's next pages (the Privacy audit stands apart), as app.py registers them.
        targets = [t for t in session.app_pages() if t[0] not in ("app_pages/1_Data.py", "app_pages/8_Privacy_audit.py")]
        for col, (path, label, icon) in zip(st.columns(3) + st.columns(3), targets):
            col.page_link(path, label=label, icon=icon)
