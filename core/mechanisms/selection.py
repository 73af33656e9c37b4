"""Private selection over a grid of labeling settings (Papernot–Steinke random stopping).

:func:`select` tunes a grid of candidates -- (mechanism, settings) pairs run on the same
teachers' votes -- with a guarantee fixed before anything runs
(:mod:`core.accounting.selection`, docs/design.md §10.3):

1. the whole selection's privacy map is computed from the candidates' public settings;
2. the number of repetitions ``K`` is drawn from a truncated negative binomial
   distribution (mean ``μ``, shape ``η``; geometric for ``η = 1``), independently of the
   data, and is never cut short (the guarantee needs the real distribution);
3. each repetition picks a candidate uniformly at random, runs it with fresh noise
   and scores it privately: by the number it answered (an output of the run), or by a
   count over private rows held out of every teacher's chunk (e.g. the student's correct
   predictions there) plus discrete Gaussian noise ``σ_s``;
4. only the best repetition is released: its candidate, its labels and its score.  The
   other repetitions' labels and scores are discarded (releasing them is not covered),
   and so are ``K`` and the sequence of candidates tried: Papernot–Steinke's theorem
   bounds the best output with ``K`` *hidden*.  Shown beside it, the release is the best
   of ``K`` for a known ``K``, which the theorem does not cover (docs/design.md §10.3
   measures the gap).  The distribution of ``K`` (its mean and shape) is public.

The released :class:`SelectionResult` carries the chosen run's
:class:`~core.mechanisms.LabelingResult` with ``epsilon``/``delta`` set to the WHOLE
selection's guarantee (the report of the release states it), the run's own guarantee
kept in ``params["run_epsilon"]``.

References
----------
.. [PS22] N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
.. [LT19] J. Liu, K. Talwar. Private Selection from Private Candidates. STOC 2019.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core.errors import DataError, ParameterError

__all__ = ["SelectionResult", "select", "selection_inputs", "selection_plan", "draw_repetitions", "default_mean", "check_candidates",
           "check_selection", "hidden_repetitions", "HOLDOUT_ROWS", "SCORE_SIGMA"]

MEAN_PER_CANDIDATE = 3.0
"""The default mean number of repetitions per candidate of the grid."""


@dataclass(frozen=True)
class SelectionResult:
    """What a private selection releases: the chosen candidate, its labels, its score and the guarantee.

    Nothing here says how many repetitions ran or which candidates were tried: the
    guarantee holds for the best repetition with their number hidden (module docstring).

    Attributes
    ----------
    chosen : int
        Index of the selected candidate in the grid.
    mechanism : str
    settings : dict
        The selected candidate's settings as given.
    result : LabelingResult
        The selected run's labels; its ``epsilon``/``delta`` are the whole selection's.
    epsilon, delta : float
        The whole selection's guarantee (fixed before it ran).
    score : float
        The selected repetition's released score.
    score_kind : str
        ``"answered"`` or ``"held-out count"``.
    entry : RDPEntry
        The selection's privacy map as a ledger entry.
    """

    chosen: int
    mechanism: str
    settings: dict
    result: Any
    epsilon: float
    delta: float
    score: float = float("nan")
    score_kind: str = "answered"
    entry: Any = field(default=None, repr=False)


HOLDOUT_ROWS = 500
"""Default number of private rows (or persons) held out of every teacher to score a selection's candidates
(:func:`core.pipeline.tune_table`)."""

SCORE_SIGMA = 5.0
"""Default discrete Gaussian noise of the held-out count (sensitivity 1) that scores each candidate."""


def check_candidates(candidates: Sequence[Any]) -> list[tuple[str, dict]]:
    """Candidates as ``(mechanism, settings)`` pairs.

    Parameters
    ----------
    candidates : sequence of (str, mapping)

    Returns
    -------
    list of (str, dict)
    """
    out = []
    for c in candidates:
        try:
            name, settings = c
        except (TypeError, ValueError):
            raise ParameterError("each candidate is a (mechanism, settings) pair.") from None
        if not isinstance(name, str) or not isinstance(settings, Mapping):
            raise ParameterError("each candidate is a (mechanism name, settings mapping) pair.")
        out.append((name, dict(settings)))
    if not out:
        raise ParameterError("private selection needs at least one candidate.")
    return out


def default_mean(n_candidates: int) -> float:
    """The default mean number of repetitions: :data:`MEAN_PER_CANDIDATE` per candidate.

    Parameters
    ----------
    n_candidates : int
        The grid's number of candidate runs (at least one is counted).

    Returns
    -------
    float
    """
    return MEAN_PER_CANDIDATE * max(1, int(n_candidates))


def draw_repetitions(mean: float, shape: float, rng=None, size: int | None = None):
    """Draw the number of repetitions from the truncated negative binomial distribution.

    ``P[K = k] ∝ C(k + η − 1, k) (1 − γ)^k`` for ``k ≥ 1`` (``η > 0``), or ``∝ (1 − γ)^k / k``
    (``η = 0``, logarithmic), with γ set so the mean is ``mean`` (dp-accounting's map from
    the mean to γ, the same the accountant uses).  Drawn exactly: negative binomial draws
    conditioned on ``K ≥ 1`` by rejection; numpy's logarithmic sampler for ``η = 0``.

    Parameters
    ----------
    mean : float
        At least 1 (a mean of exactly 1 is one repetition).
    shape : float
    rng : Generator, int or None
    size : int, optional
        Draw this many independent values (an array) instead of one int.

    Returns
    -------
    int or numpy.ndarray of int64

    References
    ----------
    N. Papernot, T. Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, §2.
    """
    from dp_accounting.rdp.rdp_privacy_accountant import _gamma_truncated_negative_binomial

    from core.accounting.selection import check_repetitions
    from core.noise import check_rng

    mean, shape = check_repetitions(mean, shape)
    gen = check_rng(rng)
    n = 1 if size is None else int(size)
    if mean == 1.0 and shape > 0:
        out = np.ones(n, dtype=np.int64)
    else:
        gamma = float(_gamma_truncated_negative_binomial(shape, mean))
        if shape == 0.0:
            out = gen.logseries(1.0 - gamma, n).astype(np.int64)
        else:
            out = np.zeros(n, dtype=np.int64)
            todo = np.arange(n)
            while todo.size:
                k = gen.negative_binomial(shape, gamma, todo.size).astype(np.int64)
                ok = k >= 1
                out[todo[ok]] = k[ok]
                todo = todo[~ok]
    return int(out[0]) if size is None else out


def selection_plan(candidates: Sequence[Any], m: int, *, prepare: Callable[[str, Mapping[str, Any], int], tuple],
                   mean: float | None = None, shape: float = 1.0, score_sigma: float | None = None,
                   delta: float | None = None):
    """The candidates' resolved settings and the whole selection's privacy map, before anything runs.

    Parameters
    ----------
    candidates : sequence of (str, mapping)
    m : int
        Queries each candidate labels.
    prepare : callable
        ``prepare(name, settings, m) -> (params, ledger_entry)``: a candidate's resolved
        parameters and its privacy map in the ledger's terms (:func:`core.pipeline.tune_plan`
        passes the pipeline's; this module sits below the pipeline and does not import it).
    mean : float, optional
        Mean number of repetitions (default :func:`default_mean`).
    shape : float
    score_sigma : float or None
        Noise of a held-out score (None: the score is the number answered).
    delta : float, optional
        δ of the whole selection (default: the largest candidate δ).

    Returns
    -------
    (list of (str, dict), RDPEntry, PrivacyGuarantee)
        Resolved candidates, the ledger entry and its (ε, δ).
    """
    cands = check_candidates(candidates)
    key = tuple((name, tuple(sorted(s.items()))) for name, s in cands)
    resolved, entry, g = _plan(prepare, key, int(m), None if mean is None else float(mean), float(shape),
                               None if score_sigma is None else float(score_sigma), None if delta is None else float(delta))
    return [(n, dict(p)) for n, p in resolved], entry, g


@functools.lru_cache(maxsize=64)
def _plan(prepare, key, m, mean, shape, score_sigma, delta):
    """The plan of :func:`selection_plan`, cached: the repeat-and-select curve is costly and
    depends on public settings only (``key``: the candidates as hashable pairs)."""
    from core.ledger.compose import compose_entries
    from core.accounting.selection import selection_entry
    from core.validation import check_delta

    cands = [(name, dict(s)) for name, s in key]
    prepared = [(name, *prepare(name, s, m)) for name, s in cands]
    resolved = [(name, params) for name, params, _ in prepared]
    entries = [e for _, _, e in prepared]
    if delta is None:
        delta = max(float(p.get("delta", 0.0) or 0.0) for _, p in resolved) or 1e-6
    delta = check_delta(delta)
    mean = default_mean(len(cands)) if mean is None else float(mean)
    entry = selection_entry(entries, mean=mean, shape=shape, score_sigma=score_sigma, delta=delta,
                            params={"m": m, "mechanisms": ",".join(sorted({n for n, _ in cands}))})
    return tuple((n, tuple(p.items())) for n, p in resolved), entry, compose_entries([entry])


def selection_inputs(inputs) -> dict[str, Any]:
    """What the candidates read, by kind: ``{"counts": votes, "rows": PrivateRows}`` (one or both).

    A bare array is the teachers' vote counts.  Every input must label the same ``m`` queries.

    Parameters
    ----------
    inputs : array-like, PrivateRows or mapping
        Vote counts ``(m, n_classes)``, the private rows of a DP-training route
        (:class:`core.mechanisms.dp_training.PrivateRows`), or a mapping ``{"counts": …,
        "rows": …}``.

    Returns
    -------
    dict
    """
    from core.mechanisms.dp_training import PrivateRows

    if isinstance(inputs, Mapping):
        given = {str(k): v for k, v in inputs.items() if v is not None}
    elif isinstance(inputs, PrivateRows):
        given = {"rows": inputs}
    else:
        given = {"counts": inputs}
    unknown = sorted(set(given) - {"counts", "rows"})
    if unknown or not given:
        raise ParameterError("private selection reads vote counts ('counts') and/or the private rows of a "
                             f"DP-training route ('rows'), got {', '.join(unknown) or 'nothing'}.")
    if "counts" in given:
        given["counts"] = np.asarray(given["counts"])
        if given["counts"].ndim != 2:
            raise ParameterError("private selection reads vote counts of shape (m, n_classes).")
    if len({int(v.shape[0]) for v in given.values()}) != 1:
        raise ParameterError("the vote counts and the private rows' public rows must be the same m queries.")
    return given


def _repetitions(given, resolved, mean: float, shape: float, score, score_sigma, gen) -> tuple:
    """The best repetition ``(score, index, result)``; ``K``, the candidates tried and the other
    repetitions' results and scores stay in this frame and die with it.

    ``K`` and each repetition's candidate come from operating-system entropy whatever ``gen``
    is: a known seed (the command line's ``--seed``, a notebook's ``rng=0``) replays neither
    how many repetitions ran nor which candidates they ran (a replayed sequence of candidates
    beside the released index would bound ``K`` from below).  ``gen`` draws the candidates'
    noise and the scores'.  Whatever a repetition warns is silenced: one warning per repetition
    (a scoring student that does not converge, say) would count them.
    """
    import warnings

    from core import noise
    from core.mechanisms import registry

    hidden = np.random.default_rng()  # K and the candidates tried: never from ``gen``
    best = None
    with warnings.catch_warnings():  # a repetition's warnings would tell how many ran
        warnings.simplefilter("ignore")
        for _ in range(draw_repetitions(mean, shape, hidden)):  # K is never kept
            j = int(hidden.integers(len(resolved)))
            name, params = resolved[j]
            mech = registry.get(name)
            res = mech.label(given[mech.inputs], **params, rng=gen)
            if score is None:
                s = float(res.n_answered)
            else:
                s = float(score(res)) + float(noise.discrete_gaussian(score_sigma, rng=gen))
            if best is None or s > best[0]:
                best = (s, j, res)
    return best


def hidden_repetitions(run: Callable[[], Any], failure: str, state: str) -> Any:
    """``run()`` (a selection's repetitions), with a failure turned into one fixed :class:`DataError`.

    The error is raised outside the handler, so nothing of the failed repetition (its traceback's
    frames: how many ran, their scores) stays reachable from it: the guarantee does not cover
    that state (docs/design.md §10.3, §10.8).

    Parameters
    ----------
    run : callable
        The repetitions, without arguments.
    failure : str
        What failed and that the charge stands, in words.
    state : str
        What the hidden traceback would have shown, in words.

    Returns
    -------
    Any
        What ``run`` returned.
    """
    failed = False
    try:
        return run()
    except Exception:  # noqa: BLE001 - its traceback holds the repetitions' state (above)
        failed = True
    if failed:  # raised here, outside the handler
        raise DataError(f"{failure} Its error is not shown: its traceback would hold the repetitions' state ({state}), "
                        "which the guarantee does not cover. Run the failing candidate alone, e.g. on public or "
                        "synthetic data, to see its error.")


def check_selection(inputs, candidates: Sequence[Any], *, score=None,
                    score_sigma: float | None = None) -> dict[str, Any]:
    """Check a selection's inputs, candidates and score before anything is charged or run.

    Parameters
    ----------
    inputs, candidates, score, score_sigma
        As for :func:`select`.

    Returns
    -------
    dict
        :func:`selection_inputs` of ``inputs``.

    Raises
    ------
    ParameterError
        A held-out score without its noise (or noise without a score), a candidate that reads
        teacher scores, or one whose input the selection was not given.
    """
    from core.mechanisms import registry

    if score is not None and score_sigma is None:
        raise ParameterError("a held-out score needs its noise score_sigma (a count of sensitivity 1 is released noisily).")
    if score is None and score_sigma is not None:
        raise ParameterError("score_sigma applies only to a held-out score; the number answered needs no noise.")
    given = selection_inputs(inputs)
    for name, _ in check_candidates(candidates):
        kind = registry.get(name).inputs
        if kind == "scores":
            raise ParameterError(f"{name} reads teacher scores; private selection runs candidates on vote counts "
                                 "or on the private rows (a DP-training route).")
        if kind not in given:
            raise ParameterError(f"{name} reads {'vote counts' if kind == 'counts' else 'the private rows'}, "
                                 f"which the selection was not given (inputs: {', '.join(sorted(given))}).")
    return given


def select(inputs, candidates: Sequence[Any], *, prepare: Callable[[str, Mapping[str, Any], int], tuple],
           mean: float | None = None, shape: float = 1.0, score: Callable[[Any], float] | None = None,
           score_sigma: float | None = None, delta: float | None = None, rng=None) -> SelectionResult:
    """Choose the best candidate on the votes privately and release its labels.

    Parameters
    ----------
    inputs : array-like, PrivateRows or mapping
        What the candidates read (:func:`selection_inputs`): the teachers' vote counts
        ``(m, n_classes)`` for the ensemble's mechanisms, the private rows
        (:class:`~core.mechanisms.dp_training.PrivateRows`) for a DP-training route, or
        ``{"counts": …, "rows": …}`` for a grid of both.  A DP-training candidate trains a
        fresh model with fresh noise at each repetition that picks it, like any other
        candidate's run; its privacy map must be an RDP curve or pure ε (Gaussian objective
        perturbation, known only as (ε, δ), is refused by :func:`selection_plan`).
    candidates : sequence of (str, mapping)
        The grid: registered mechanism names with their settings (``epsilon`` as for
        :func:`core.pipeline.label`).
    prepare : callable
        As for :func:`selection_plan` (:func:`core.pipeline.tune` passes the pipeline's).
    mean : float, optional
        Mean number of repetitions (default :func:`default_mean`).
    shape : float
        Shape of its distribution (1: geometric).
    score : callable, optional
        ``score(result) -> int``: a count over private rows HELD OUT of every teacher's
        chunk, of sensitivity 1 in those rows, reading the teachers' rows only through
        ``result`` (e.g. :func:`core.pipeline.holdout_score`); released with discrete
        Gaussian noise ``score_sigma``.  None: the number answered.
    score_sigma : float, optional
        Required with ``score``.
    delta : float, optional
        δ of the whole selection (default: the largest candidate δ).
    rng : Generator, int or None
        The candidates' choice and noise at each repetition.  The number of repetitions
        ``K`` and the candidate each repetition runs are drawn from operating-system entropy
        whatever is given here, so a known seed replays neither.  The repetitions draw from a
        child keyed by one draw of ``rng`` (:func:`core.noise.detached_rng`): a Generator
        given here moves by that one draw whatever ``K`` is, so its later draws do not count
        the repetitions.

    Returns
    -------
    SelectionResult
        The number of repetitions and the candidates tried are not part of it.

    Raises
    ------
    ParameterError
        From :func:`check_selection` and :func:`selection_plan`, before anything runs.
    DataError
        A repetition failed: one fixed message, raised after the repetitions' frame is gone
        (its traceback would hold how many ran and their scores).
    """
    from core import noise

    given = check_selection(inputs, candidates, score=score, score_sigma=score_sigma)
    m = int(next(iter(given.values())).shape[0])
    resolved, entry, g = selection_plan(candidates, m, prepare=prepare, mean=mean, shape=shape, score_sigma=score_sigma,
                                        delta=delta)
    mean = float(entry.params["repeat_mean"])
    gen = noise.detached_rng(rng)  # a caller's Generator moves by one draw, whatever K is
    best = hidden_repetitions(
        lambda: _repetitions(given, resolved, mean, shape, score, score_sigma, gen),
        "A repetition of the private selection failed (a candidate could not run or could not be scored); the "
        "selection stopped, and a charge made for it stands.", "how many ran, their scores")
    s, j, res = best
    given = check_candidates(candidates)[j][1]
    kind = "answered" if score is None else "held-out count"
    params = dict(res.params)
    params.update(run_epsilon=float(res.epsilon), run_delta=float(res.delta), selection_candidates=len(resolved),
                  selection_mean=mean, selection_shape=float(shape), selection_score=kind)
    if score_sigma is not None:
        params["selection_score_sigma"] = float(score_sigma)
    released = replace(res, epsilon=float(g.epsilon), delta=float(g.delta), params=params,
                       accounting=(f"Private selection (Papernot–Steinke 2022) over {len(resolved)} candidates, a random "
                                   f"number of repetitions (mean {mean:g}, shape {shape:g}; how many ran is not released), "
                                   f"the best by {kind} released: ({g.epsilon:.4g}, {g.delta:.3g}) for the whole selection; "
                                   f"this run alone: ({res.epsilon:.4g}, {res.delta:.3g}). {res.accounting}"))
    return SelectionResult(chosen=j, mechanism=resolved[j][0], settings=given, result=released, epsilon=float(g.epsilon),
                           delta=float(g.delta), score=s, score_kind=kind, entry=entry)
