"""The one form of every privacy claim: :class:`PrivacyGuarantee` (ε, δ, method, how)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PrivacyGuarantee", "data_dependent_note"]


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-differential-privacy guarantee and how it was obtained.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee, under replace-one adjacency.
    method : str
        Short name of the accountant (``"basic"``, ``"advanced"``, ``"pld"``,
        ``"btt-exact"``, ``"pate-simple"`` ...).
    detail : str
        One or two sentences saying how (ε, δ) was computed.
    parts : dict
        The components (e.g. ``epsilon_svt``, ``delta_svt``, ``delta_release``).
    """

    epsilon: float
    delta: float
    method: str
    detail: str = ""
    parts: dict = field(default_factory=dict)


def data_dependent_note(epsilon_data_dependent: float | None, epsilon: float) -> str | None:
    """What a NON-PRIVATE data-dependent ε says beside the run's guarantee, or None.

    A data-dependent ε (PATE's analyses) is computed from the private votes, so it is
    never a guarantee.  It can only be informative when it is *below* the
    data-independent guarantee; above it, it is of no use: the data-independent ε
    already holds for every dataset, these votes included.

    Parameters
    ----------
    epsilon_data_dependent : float or None
        The diagnostic (None: none was computed).
    epsilon : float
        The run's data-independent guarantee.

    Returns
    -------
    str or None
        A sentence when the diagnostic is above the guarantee.
    """
    if epsilon_data_dependent is None or not epsilon_data_dependent > epsilon:
        return None
    return (f"The data-dependent ε = {epsilon_data_dependent:.4g} (NON-PRIVATE) is above the guarantee "
            f"ε = {epsilon:.4g}: it is of no use here, since the data-independent guarantee already holds "
            "for every dataset, these votes included.")
