"""Tables built for the tests that look like real ones: a criminal-justice table (people's
names, birth dates, case numbers, follow-up outcomes) and a credit table (a real ``status``
column, no column named like a label).  Random, from fixed seeds; no real person."""

from __future__ import annotations

import numpy as np
import pandas as pd

FIRST = ["miguel", "kevon", "ed", "marsha", "bo", "marcus", "lorenzo", "jamaal", "andre", "dalton", "quandre",
         "tyrell", "shanice", "ashley", "joseph", "keisha", "xavion", "rodrigo", "caitlyn", "omari", "jose",
         "latoya", "dustin", "brandon", "travis", "yolanda", "demetrius", "kenya", "cody", "juan"]
LAST = ["hernandez", "dixon", "philo", "miles", "harris", "brown", "ruiz", "williams", "moore", "jones",
        "oliveira", "gaines", "mcbride", "castillo", "nguyen", "pierre", "fontaine", "okafor", "baptiste",
        "smith", "johnson", "garcia", "king", "lewis", "washington", "reyes", "delgado", "banks", "wolfe", "hale"]
CHARGES = ["Aggravated Assault w/Firearm", "Felony Battery w/Prior Convict", "Possession of Cocaine",
           "Battery", "Grand Theft in the 3rd Degree", "Driving While License Revoked", "Petit Theft",
           "Possession of Cannabis", "Resist/Obstruct W/O Violence", "Burglary Unoccupied Dwelling"]


def criminal_justice_csv(n: int = 1500, seed: int = 0) -> bytes:
    """A COMPAS-like CSV: ``two_year_recid`` is the label; ``is_recid`` agrees with it on about
    97 % of the rows and ``event`` on about 89 %; ``priors_count`` appears twice in the header,
    ``violent_recid`` is empty, and the re-offence columns are missing for most rows."""
    g = np.random.default_rng(seed)
    first, last = g.choice(FIRST, n), g.choice(LAST, n)
    age = g.integers(18, 70, n)
    priors = g.poisson(2.5, n)
    risk = 1 / (1 + np.exp(-(0.35 * priors - 0.04 * (age - 33) - 0.2)))
    label = (g.random(n) < risk).astype(int)
    flip = lambda share: np.where(g.random(n) < share, 1 - label, label)  # noqa: E731
    screening = pd.Timestamp("2013-01-01") + pd.to_timedelta(g.integers(0, 700, n), unit="D")
    dob = screening - pd.to_timedelta(age * 365 + g.integers(0, 365, n), unit="D")
    jail_in = screening - pd.to_timedelta(g.integers(0, 3, n), unit="D") + pd.to_timedelta(g.integers(0, 86400, n), unit="s")
    case = [f"{d:%y}{g.integers(0, 99_999_999):08d}{g.choice(['CF10A', 'MM10A', 'MO10A'])}" for d in screening]
    reoffended = label == 1
    rows = {
        "id": np.arange(1, n + 1),
        "name": [f"{a} {b}" for a, b in zip(first, last)],
        "first": first,
        "last": last,
        "compas_screening_date": screening.strftime("%Y-%m-%d"),
        "sex": g.choice(["Male", "Female"], n, p=[0.8, 0.2]),
        "dob": dob.strftime("%Y-%m-%d"),
        "age": age,
        "age_cat": np.where(age < 25, "Less than 25", np.where(age > 45, "Greater than 45", "25 - 45")),
        "race": g.choice(["African-American", "Caucasian", "Hispanic", "Other"], n, p=[0.5, 0.34, 0.09, 0.07]),
        "juv_fel_count": g.poisson(0.1, n),
        "decile_score": np.clip(np.round(1 + 9 * risk + g.normal(0, 1.5, n)), 1, 10).astype(int),
        "priors_count": priors,
        "days_b_screening_arrest": np.where(g.random(n) < 0.05, "", g.integers(-30, 30, n).astype(str)),
        "c_jail_in": jail_in.strftime("%Y-%m-%d %H:%M:%S"),
        "c_case_number": case,
        "c_charge_degree": g.choice(["F", "M"], n, p=[0.65, 0.35]),
        "c_charge_desc": g.choice(CHARGES, n),
        "is_recid": flip(0.03),
        "r_case_number": [f"{g.integers(13, 16)}{g.integers(0, 99_999_999):08d}MM10A" if r else "" for r in reoffended],
        "r_charge_degree": [g.choice(["(F3)", "(M1)", "(M2)"]) if r else "" for r in reoffended],
        "violent_recid": [""] * n,
        "priors_count ": priors,  # a second 'priors_count' (the header's spaces are stripped)
        "event": flip(0.11),
        "two_year_recid": label,
    }
    frame = pd.DataFrame(rows)
    return frame.to_csv(index=False).encode()


def contacts_csv(n: int = 400, seed: int = 1) -> bytes:
    """A customer table with e-mail addresses, phone numbers, UK postcodes, a free-text note and
    a full-name column under a name that says nothing (``customer``); the label is ``churned``."""
    g = np.random.default_rng(seed)
    first, last = g.choice(FIRST, n), g.choice(LAST, n)
    tenure = g.integers(1, 120, n)
    churned = np.where(g.random(n) < 1 / (1 + np.exp(0.04 * (tenure - 30))), "yes", "no")
    words = ["called", "about", "billing", "upgrade", "router", "slow", "refund", "asked", "again", "happy", "moving"]
    return pd.DataFrame({
        "customer": [f"{a.title()} {b.title()}" for a, b in zip(first, last)],
        "contact": [f"{a}.{b}{i}@example.org" for i, (a, b) in enumerate(zip(first, last))],
        "mobile_no": [f"+44 7{g.integers(100, 999)} {g.integers(100000, 999999)}" for _ in range(n)],
        "area": [f"{g.choice(['SW', 'N', 'EC', 'M', 'LS'])}{g.integers(1, 20)} {g.integers(1, 9)}"
                 f"{''.join(g.choice(list('ABDEFGHJLNPQRSTUWXYZ'), 2))}" for _ in range(n)],
        "note": [" ".join(g.choice(words, g.integers(5, 12))) for _ in range(n)],
        "tenure_months": tenure,
        "plan": g.choice(["basic", "plus", "pro"], n),
        "churned": churned,
    }).to_csv(index=False).encode()


def credit_frames(n: int = 600, seed: int = 2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A German-credit-like private table and a public table: a real column named ``status``
    (the checking account's status), no column named like a label (the label is ``risk``), and
    ``foreign_worker`` as the last column."""
    g = np.random.default_rng(seed)

    def make(m: int, labeled: bool) -> pd.DataFrame:
        status = g.choice(["<0", "0<=X<200", ">=200", "no checking"], m)
        duration = g.integers(4, 72, m)
        amount = g.integers(250, 18_000, m)
        score = 0.9 * (status == "<0") - 0.8 * (status == "no checking") + 0.02 * (duration - 20)
        frame = pd.DataFrame({
            "status": status, "duration": duration,
            "credit_history": g.choice(["existing paid", "critical", "delayed", "all paid"], m),
            "purpose": g.choice(["radio/tv", "new car", "furniture", "business", "education"], m),
            "credit_amount": amount, "age": g.integers(19, 75, m),
        })
        if labeled:
            frame["risk"] = np.where(g.random(m) < 1 / (1 + np.exp(-score)), "bad", "good")
        frame["foreign_worker"] = g.choice(["yes", "no"], m, p=[0.96, 0.04])
        return frame

    return make(n, True), make(n // 3, False)
