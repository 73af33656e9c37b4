"""The lecture's presets walked as a lecturer walks them (AppTest, demo mode, default data): the release
priced before its click, Compare's priced run said in one sentence after it, plain words on Student & export,
the certified preset's two guarantees explained."""

from __future__ import annotations

import re


def texts(elements) -> list[str]:
    return [e.value for e in elements]


LEDGER = re.compile(r"Your lesson's ledger: ε ([0-9.,e+]+) over (\d+) runs?\.")


def ledger(at) -> tuple[float, int]:
    """The sidebar's ledger line: (ε, runs)."""
    hit = next(f for f in (LEDGER.search(t) for t in texts(at.sidebar.markdown)) if f)
    return float(hit.group(1).replace(",", "")), int(hit.group(2))


def test_the_release_states_its_price_before_the_click(lab):
    at = lab()
    at.sidebar.button(key="preset_g").click().run()
    assert not at.exception, at.exception
    button = at.button(key="release")
    assert button.label.startswith("Release (1 run, ε "), button.label
    said = " ".join(texts(at.markdown) + texts(at.caption) + texts(at.info))
    assert "your lesson's total would go from" in said, said
    before = ledger(at)
    button.click().run()
    assert not at.exception, at.exception
    after = ledger(at)
    assert after[1] == before[1] + 1
