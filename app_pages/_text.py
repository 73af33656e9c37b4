"""User text on the pages: names from a file (columns, classes, the file's own name) shown as text.

Streamlit renders the text of ``st.markdown``, captions, alerts, headers, metric and widget
labels and help tooltips as Markdown: a column named ``[x](javascript:alert(1))`` would become
a link, ``<img src=x onerror=alert(1)>`` an HTML tag for the page to deal with, ``**a**`` bold
and ``$x$`` a formula.  Every text that comes from an uploaded file (or from a library
message that quotes it) passes through :func:`literal` before it joins Markdown, and through
:func:`chart_text` before it joins a Plotly chart (whose labels understand a few HTML tags and
entities); a dataframe and a select box's options show their cells as plain text already.

Both also show Unicode's bidirectional controls (embeddings, overrides and isolates U+202A–U+202E,
U+2066–U+2069, the marks U+200E, U+200F and U+061C) as visible names such as ``⟨U+202E⟩``:
invisible, they reorder the characters around them, so a class named ``abc``, U+202E, ``fdp.exe``
would show as ``abcexe.pdf``.
"""

from __future__ import annotations

import html
import re

# One pass over the text; each match is escaped, and CommonMark shows an escaped character as
# the character itself:
# * a Streamlit emoji or icon name (":smile:", ":material/home:") has its colons and slash escaped,
#   and so has any colon followed by a character (":red[", "a:b"); a colon before a space (prose)
#   is left as it is;
# * "<", ">" and "&" become entities (a backslash before them would show inside a web address
#   that Streamlit links), the other characters that start markup anywhere in a line (emphasis,
#   strikethrough, code, links and images, formulas, table cells, headings) get a backslash;
# * underscores too, except inside a word ("mean_radius"), where CommonMark never reads them as
#   emphasis.
_TOKEN = re.compile(r"(?P<named>:[\w/+-]+:)|(?P<colon>:(?=\S))|(?P<entity>[<>&])"
                    r"|(?P<char>[\\`*\[\]$~|#])|(?P<under>_+)")
# What starts a block only at the start of a line: a list item, a setext heading's underline.
_LINE_START = re.compile(r"^(\s*\d*)([-+=.)])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """``text`` with every bidirectional control shown as its code point, ``⟨U+202E⟩``."""
    return _BIDI_CONTROLS.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def _escape(match: re.Match) -> str:
    text = match.group()
    if match.group("named"):
        return re.sub(r"([:/])", r"\\\1", text)
    if match.group("entity"):
        return html.escape(text, quote=False)
    if match.group("under"):
        before, after = match.string[match.start() - 1:match.start()], match.string[match.end():match.end() + 1]
        if before.isalnum() and after.isalnum():
            return text
        return text.replace("_", "\\_")
    return "\\" + text


def literal(text: object) -> str:
    """``text`` for a Markdown string, shown exactly as its characters.

    Parameters
    ----------
    text : object
        A name from the user's data (a column, a class, a file name) or a message quoting one;
        ``str(text)`` is what is shown.

    Returns
    -------
    str
        Everything that could start markup backslash-escaped (prose punctuation is left as it
        is, so that a plain name reads the same); line breaks, which could start a heading, a
        list or a code block, become spaces; bidirectional controls, which would reorder the
        characters around them unseen, show as their code points (``⟨U+202E⟩``).  A web address stays a link to that address
        (Streamlit links ``http://…``, ``www.…`` and e-mail addresses in any text); no other
        link, tag or format can come from ``text``.
    """
    escaped = _TOKEN.sub(_escape, _LINE_BREAKS.sub(" ", visible_controls(str(text))))
    return _LINE_START.sub(r"\1\\\2", escaped)


def chart_text(text: object) -> str:
    """``text`` for a Plotly label (axis tick, legend, hover), shown exactly as its characters.

    Plotly reads ``<b>``, ``<a href=…>``, ``<br>`` and HTML entities in chart text; escaping
    ``&``, ``<`` and ``>`` as entities makes it show them as characters; bidirectional controls
    show as their code points (``⟨U+202E⟩``), as in :func:`literal`.
    """
    return html.escape(visible_controls(str(text)), quote=False)


# The library's keyword arguments named in its messages, and the app's controls for them
# (the command line has its flags: core.cli.common.LIBRARY_WORDS).  Longest first.
APP_WORDS = (
    ("given as the private file and as the public file",
     "uploaded as the **Private labeled CSV** and as the **Public unlabeled CSV**"),
    ("Give as the public file the rows to label", "Upload as the **Public unlabeled CSV** the rows to label"),
    ("the private file given as the public file", "the private file uploaded as the **Public unlabeled CSV**"),
    ("give --features (the app: its column choice; the library: the feature columns)",
     "choose them in advance with **Feature columns used** (each finding's Keep button, or the box)"),
    ("drop_columns=", "their **Drop** button below: "),
    ("(label_column=...)", "(the **Label column** box)"),
    ("Pass one of them as label_column.", "Choose one of them in the **Label column** box."),
    ("with label_column", "in the **Label column** box"),
    ("label_column", "the **Label column** box"),
    ("load with missing='drop'", "choose **drop** under **Missing values**"),
    ("load with missing='impute'", "choose **impute** under **Missing values**"),
    ("missing='drop'", "**Missing values: drop**"),
    ("missing='impute'", "**Missing values: impute**"),
    ("missing='refuse'", "**Missing values: refuse**"),
    ("missing=\"drop\"", "**Missing values: drop**"),
    ("missing=\"impute\"", "**Missing values: impute**"),
    ("rename_duplicates=True", "**Rename duplicate column names**"),
    ("drop_empty_columns=True", "**Drop columns empty in every row**"),
    ("with missing_markers", "with **Treat '?' as missing**"),
    ("missing_markers=", "**Treat '?' as missing**: "),
    ("privacy_unit=", "**Privacy unit** "),
    ("encoding='latin-1' or another", "**File format: Encoding** (latin-1 or another)"),
    ("encoding='latin-1'", "**File format: Encoding latin-1**"),
    ("encoding='cp1252'", "**File format: Encoding cp1252**"),
    ("decimal=','", "**File format: Decimal mark ,**"),
    ("decimal='.'", "**File format: Decimal mark .**"),
    ("sep=';'", "**File format: Separator ;**"),
    ("sep=','", "**File format: Separator ,**"),
    ("sep=tab", "**File format: Separator tab**"),
)
"""The library's option words (as :func:`literal` shows them) and the app's controls for them."""


def app_words(text: object) -> str:
    """A library message for Markdown (:func:`literal`) in the app's words: each option it names
    becomes the control that sets it (:data:`APP_WORDS`), e.g. ``missing='drop'`` -> **Missing
    values: drop**; the command line says flags instead (:func:`core.cli.common.cli_words`)."""
    out = literal(text)
    for library, control in APP_WORDS:
        out = out.replace(literal(library), control)
    return out


def number(x: float, spec: str = ".4g") -> str:
    """A number as a student reads it: formatted by ``spec``, its minus sign the typographic "−"
    (U+2212), never the hyphen "-" (``number(-0.5, "+.4g")`` is "−0.5")."""
    return format(float(x), spec).replace("-", "−")
