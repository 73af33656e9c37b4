"""The one form of every privacy claim: :class:`PrivacyGuarantee` (ε, δ, method, how)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PrivacyGuarantee"]


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
