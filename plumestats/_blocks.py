"""The EM engine's sums taken over row blocks: bounded memory and Dask.

Every quantity the engine needs -- ``L``, the surrogate ``Q``, the gradient and
the Hessian blocks of either -- is a sum over observations. :class:`BlockProblem`
offers the interface of :class:`plumestats._em.Problem` (so :func:`run_em` runs
unchanged), but its "terms" are sums gathered by one map-reduce over row blocks
of the standardised design instead of per-observation arrays. Memory beyond the
data is then ``O(block * p * K^2 + (K p)^2)``.

Where the blocks live is the job of a *row source*: :class:`InMemoryBlocks`
slices a numpy design (standardising each block on the fly, so the standardised
copy is never whole), ``plumestats._dask.DaskBlocks`` submits one task per
partition to whatever Dask scheduler is active. A source has ``nobs``,
``n_cols``, ``reduce(kernel, **arguments)`` (the sum of
``kernel(z_block, y_block, **arguments)`` over the blocks) and ``take(rows)``.

Each pass over the data computes everything that the engine will ask for next
(``L`` and ``Q`` together at a line-search trial; the gradient with the Hessian
it will be asked for, guessed from the last one requested), so that a Newton or
EM iteration costs one pass plus one per line-search trial.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ._design import DesignMatrix
from ._likelihood import compute_hard_terms, compute_terms, linear_scores, q_value
from ._scaling import DesignScaling

__all__ = [
    "BlockProblem",
    "BlockTerms",
    "DataSums",
    "InMemoryBlocks",
    "block_sums",
    "combine_moments",
    "combine_sums",
    "design_moments",
    "in_memory_moments",
    "scaling_from_moments",
    "source_sums",
]

# Sums combined by maximum, not addition.
_MAX_KEYS = frozenset({"moved", "max_abs_move"})
_PERFECT_LOGPROB = -1e-8  # as plumestats._em.PERFECT_LOGPROB (no import cycle)


# ------------------------------------------------------------------ kernels
def _terms(z, y, params, k, gamma, hard):
    scores = linear_scores(params, z, k)
    if hard:
        return compute_hard_terms(scores, y)
    return compute_terms(scores, y, gamma)


def block_sums(
    z: np.ndarray,
    y: np.ndarray,
    *,
    params: np.ndarray,
    k: int,
    gamma: float,
    hard: bool,
    need: frozenset,
    base: np.ndarray | None = None,
    anchor: np.ndarray | None = None,
    direction: np.ndarray | None = None,
) -> dict:
    """The sums over one block of rows that the engine needs at ``params``.

    Parameters
    ----------
    z, y : ndarray
        Standardised design rows ``(n_b, p)`` and outcomes in ``{-1, +1}``.
    params : ndarray
        Internal (standardised) parameters, hyperplane-major.
    need : frozenset of str
        Any of ``"L"`` (log-likelihood and the count of perfectly fitted rows),
        ``"Q"`` (surrogate with the responsibilities at ``base``), ``"Qself"``
        (with those at ``params``: the value Q's line search starts from),
        ``"moved"``
        (largest change of a score from ``anchor``), ``"grad"``, ``"hess"``
        (Hessian of ``l``), ``"qhess"`` (Hessian of Q at its own
        responsibilities), ``"gate"`` (summed gate probabilities), ``"meat"``
        (sum of outer products of the observation scores), ``"gram"`` (``z'z``),
        ``"resp_gram"``
        (the responsibility-weighted Grams of all and of perfectly fitted rows)
        and ``"max_abs_move"`` (largest ``|z' direction_k|``).
    """
    design = DesignMatrix(z)
    terms = _terms(design, y, params, k, gamma, hard)
    out: dict = {}
    if "L" in need:
        with np.errstate(over="ignore"):  # terms near -1e308 sum to -inf
            out["L"] = np.array(terms.loglikeobs.sum())
        out["n_perfect"] = np.array(float(np.sum(terms.loglikeobs > _PERFECT_LOGPROB)))
    if "Qself" in need:
        out["Qself"] = np.array(q_value(terms, terms.resp))
    if "Q" in need:
        base_resp = _terms(design, y, base, k, gamma, hard).resp
        out["Q"] = np.array(q_value(terms, base_resp))
    if "moved" in need:
        moved = terms.scores - linear_scores(anchor, design, k)
        out["moved"] = np.array(float(np.max(np.abs(moved), initial=0.0)))
    if "grad" in need:
        out["grad"] = (terms.score_weights(gamma).T @ design).ravel()
    if "hess" in need:
        out["hess"] = design.gram_blocks(terms.hessian_weights(gamma))
    if "qhess" in need:
        out["qhess"] = design.gram_blocks(terms.q_hessian_weights(gamma, terms.resp))
    if "gate" in need:
        out["gate"] = terms.gate.sum(axis=0)
    if "meat" in need:
        weights = terms.score_weights(gamma)
        scores = (weights[:, :, None] * z[:, None, :]).reshape(z.shape[0], -1)
        out["meat"] = scores.T @ scores
    if "gram" in need:
        out["gram"] = z.T @ z
    if "resp_gram" in need:
        perfect = (terms.loglikeobs > _PERFECT_LOGPROB).astype(float)
        resp = terms.resp
        out["resp_gram"] = np.stack([design.gram(resp[:, j]) for j in range(k)])
        out["resp_gram_perfect"] = np.stack(
            [design.gram(resp[:, j] * perfect) for j in range(k)]
        )
    if "max_abs_move" in need:
        moves = design @ direction.reshape(k, -1).T
        out["max_abs_move"] = np.array(float(np.max(np.abs(moves), initial=0.0)))
    return out


def source_sums(source, params, k, gamma, hard, need, **arguments) -> dict:
    """One pass of :func:`block_sums` over a row source's blocks, summed."""
    return source.reduce(
        params=params, k=k, gamma=gamma, hard=hard, need=frozenset(need), **arguments
    )


def combine_sums(left: dict, right: dict) -> dict:
    """Add two blocks' sums (maxima for the ``max`` quantities)."""
    return {
        key: np.maximum(value, right[key]) if key in _MAX_KEYS else value + right[key]
        for key, value in left.items()
    }


def design_moments(x: np.ndarray, y: np.ndarray) -> dict:
    """Column moments of one block of the raw design, merged by
    :func:`combine_moments` (Chan et al.'s pairwise update of the variance)."""
    n = x.shape[0]
    mean = x.mean(axis=0) if n else np.zeros(x.shape[1])
    return {
        "nobs": n,
        "first": x[:1].copy(),
        "min": x.min(axis=0, initial=np.inf),
        "max": x.max(axis=0, initial=-np.inf),
        "mean": mean,
        "m2": ((x - mean) ** 2).sum(axis=0),
        "sumsq": (x**2).sum(axis=0),
        "nonzero": np.count_nonzero(x, axis=0),
        "nonfinite": int(np.sum(~np.isfinite(x))),
        "radius": float(np.sqrt(np.max((x**2).sum(axis=1), initial=0.0))),
        "ysum": float(np.sum(y)),
        "yvalues": np.unique(y),
    }


def combine_moments(left: dict, right: dict) -> dict:
    """Merge the moments of two consecutive blocks (``left`` comes first)."""
    n_a, n_b = left["nobs"], right["nobs"]
    n = n_a + n_b
    if n_a == 0 or n_b == 0:
        return left if n_b == 0 else right
    delta = right["mean"] - left["mean"]
    return {
        "nobs": n,
        "first": left["first"],
        "min": np.minimum(left["min"], right["min"]),
        "max": np.maximum(left["max"], right["max"]),
        "mean": left["mean"] + delta * (n_b / n),
        "m2": left["m2"] + right["m2"] + delta**2 * (n_a * n_b / n),
        "sumsq": left["sumsq"] + right["sumsq"],
        "nonzero": left["nonzero"] + right["nonzero"],
        "nonfinite": left["nonfinite"] + right["nonfinite"],
        "radius": max(left["radius"], right["radius"]),
        "ysum": left["ysum"] + right["ysum"],
        "yvalues": np.union1d(left["yvalues"], right["yvalues"]),
    }


def scaling_from_moments(moments: dict) -> DesignScaling:
    """:meth:`DesignScaling.from_exog`'s choice, from block moments."""
    nobs = moments["nobs"]
    return DesignScaling.from_moments(
        first_row=moments["first"][0],
        constant=moments["max"] == moments["min"],
        mean=moments["mean"],
        std=np.sqrt(moments["m2"] / nobs),
        rms=np.sqrt(moments["sumsq"] / nobs),
        mostly_zero=moments["nonzero"] <= nobs / 2,
    )


# ---------------------------------------------------------- in-memory source
class InMemoryBlocks:
    """Row blocks of an in-memory design, standardised one block at a time.

    Parameters
    ----------
    exog : ndarray, shape (n, p)
        The raw design (never copied whole).
    y_pm : ndarray, shape (n,)
        Outcomes in ``{-1, +1}``.
    scaling : DesignScaling
        The standardisation applied to each block.
    chunksize : int
        Rows per block.
    moments : dict, optional
        :func:`in_memory_moments` of the design, when known (the results take
        the largest row norm from them).
    """

    def __init__(
        self,
        exog,
        y_pm,
        scaling: DesignScaling,
        chunksize: int,
        moments: dict | None = None,
    ):
        self.exog = exog
        self.y_pm = y_pm
        self.scaling = scaling
        self.chunksize = int(chunksize)
        self.moments = moments
        self.nobs, self.n_cols = exog.shape

    def _blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, self.nobs, self.chunksize):
            rows = slice(start, start + self.chunksize)
            yield self.scaling.transform_exog(self.exog[rows]), self.y_pm[rows]

    def reduce(self, kernel=block_sums, combine=combine_sums, **arguments) -> dict:
        total = None
        for z, y in self._blocks():
            sums = kernel(z, y, **arguments)
            total = sums if total is None else combine(total, sums)
        return total

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Standardised design rows and outcomes at sorted row indices."""
        return self.scaling.transform_exog(self.exog[rows]), self.y_pm[rows]


def in_memory_moments(exog, y, chunksize: int) -> dict:
    """:func:`design_moments` of a whole in-memory design, block by block."""
    total = None
    for start in range(0, exog.shape[0], chunksize):
        rows = slice(start, start + chunksize)
        moments = design_moments(exog[rows], y[rows])
        total = moments if total is None else combine_moments(total, moments)
    return total


# --------------------------------------------------------------- the problem
class _Responsibilities:
    """Stands for the responsibilities at ``params``: blocks recompute them."""

    def __init__(self, params: np.ndarray):
        self.params = params


class BlockTerms:
    """The sums at one parameter vector, filled in as the engine asks for them."""

    def __init__(self, params: np.ndarray):
        self.params = params
        self.sums: dict = {}
        self.surrogates: dict = {}
        self.anchor = None

    @property
    def resp(self) -> _Responsibilities:
        return _Responsibilities(self.params)


class BlockProblem:
    """:class:`plumestats._em.Problem`'s interface on sums over row blocks.

    Parameters
    ----------
    source : InMemoryBlocks or DaskBlocks
        Where the (standardised) rows are.
    k, gamma, ridge, hard
        As for :class:`plumestats._em.Problem`.

    Attributes
    ----------
    passes : int
        Passes over the data so far (one map-reduce each).
    """

    weights = None

    def __init__(self, source, k: int, gamma: float, ridge=None, hard: bool = False):
        self.source = source
        self.k = k
        self.gamma = 1.0 if hard else gamma
        self.hard = hard
        n_params = k * source.n_cols
        self.ridge = np.zeros(n_params) if ridge is None else np.asarray(ridge, float)
        self.passes = 0
        self._anchor = None
        # the Hessian fetched with the next gradient: EM starts with Q's
        self._next_hessian = "qhess"

    @property
    def nobs(self) -> int:
        return self.source.nobs

    @property
    def n_cols(self) -> int:
        return self.source.n_cols

    def prefetch_hessian(self, key: str | None) -> None:
        """Which Hessian (``"qhess"``, ``"hess"`` or ``None``) to compute with
        the next gradient."""
        self._next_hessian = key

    def _pass(self, params, need, **arguments) -> dict:
        self.passes += 1
        return source_sums(
            self.source, params, self.k, self.gamma, self.hard, need, **arguments
        )

    def _fill(self, terms: BlockTerms, need: set, resp=None) -> None:
        """One pass for what ``terms`` lacks of ``need``, plus what is cheap to
        add: ``L`` always, the score movement from the current iterate."""
        need = set(need) | {"L"}
        arguments = {}
        if resp is not None:
            arguments["base"] = resp.params
        anchor = self._anchor
        if anchor is not None and terms.anchor is None and anchor is not terms.params:
            need.add("moved")
            arguments["anchor"] = anchor
        need -= set(terms.sums)
        if not need:
            return
        sums = self._pass(terms.params, need, **arguments)
        if "Q" in sums:
            terms.surrogates[id(resp.params)] = (resp.params, float(sums.pop("Q")))
        if "moved" in sums:
            terms.anchor = anchor
        terms.sums.update(sums)

    # ----------------------------------------------- the Problem interface
    def terms(self, params: np.ndarray) -> BlockTerms:
        return BlockTerms(np.asarray(params, dtype=float))

    def penalty(self, params: np.ndarray) -> float:
        return 0.5 * float(np.sum(self.ridge * params**2))

    def objective(self, params: np.ndarray, terms: BlockTerms) -> float:
        self._fill(terms, {"L"})
        return float(terms.sums["L"]) - self.penalty(params)

    def surrogate(self, params, terms: BlockTerms, resp: _Responsibilities) -> float:
        if resp.params is terms.params:
            self._fill(terms, {"Qself"})
            return float(terms.sums["Qself"]) - self.penalty(params)
        known = terms.surrogates.get(id(resp.params))
        if known is None or known[0] is not resp.params:
            self._fill(terms, {"Q"}, resp=resp)
            known = terms.surrogates[id(resp.params)]
        return known[1] - self.penalty(params)

    def gradient(self, params: np.ndarray, terms: BlockTerms) -> np.ndarray:
        # the engine asks for the gradient at each new iterate first: trials
        # measure how far they move the scores from here
        self._anchor = terms.params
        need = {"grad"} | ({self._next_hessian} - {None})
        if self._next_hessian != "hess":  # an EM step: its search starts from Q
            need.add("Qself")
        self._fill(terms, need)
        return terms.sums["grad"] - self.ridge * params

    def _neg(self, terms, key) -> np.ndarray:
        self._next_hessian = key
        self._fill(terms, {key})
        hess = -terms.sums[key]
        hess[np.diag_indices_from(hess)] += self.ridge
        return hess

    def neg_hessian(self, terms: BlockTerms) -> np.ndarray:
        """Minus the Hessian of the penalised log-likelihood."""
        return self._neg(terms, "hess")

    def neg_q_hessian(self, terms: BlockTerms, resp: _Responsibilities) -> np.ndarray:
        """Minus the Hessian of Q at the terms' own responsibilities."""
        if resp.params is not terms.params:
            raise NotImplementedError("Q's Hessian at other responsibilities")
        return self._neg(terms, "qhess")

    def score_change(self, old: BlockTerms, new: BlockTerms) -> float:
        """Largest change of a fitted score between two parameter vectors."""
        if new.anchor is not old.params:
            sums = self._pass(new.params, {"moved"}, anchor=old.params)
            return float(sums["moved"])
        return float(new.sums["moved"])

    def count_perfect(self, terms: BlockTerms) -> int:
        self._fill(terms, {"L"})
        return int(terms.sums["n_perfect"])

    def responsible_grams(self, terms: BlockTerms) -> tuple[np.ndarray, np.ndarray]:
        """Block-diagonal ``sum_n r_nk z_n z_n'`` over all rows and over the
        perfectly fitted ones (see :func:`plumestats._em.separating`)."""
        self._fill(terms, {"resp_gram"})
        return (
            _block_diagonal(terms.sums["resp_gram"]),
            _block_diagonal(terms.sums["resp_gram_perfect"]),
        )

    def max_abs_move(self, direction: np.ndarray) -> float:
        """``max_n,k |z_n' d_k|`` for a hyperplane-major direction ``d``."""
        sums = self._pass(
            np.zeros_like(direction), {"max_abs_move"}, direction=direction
        )
        return float(sums["max_abs_move"])

    def gate_share(self, params: np.ndarray) -> np.ndarray:
        """Mean gate probability of each expert over the rows."""
        return self._pass(params, {"gate"})["gate"] / self.nobs

    def data_sums(
        self, terms: BlockTerms, scaling: DesignScaling, *, meat: bool, gram: bool
    ) -> DataSums:
        """What the results need from the data at the estimates, gathered in the
        pass that also computes the gradient and Hessian there (which
        :meth:`gradient` and :meth:`neg_hessian` then reuse).

        The sums are in the engine's standardised coordinates and mapped to the
        user's exactly: the rows are ``x_n = B' z_n`` and the user scores
        ``J' s_n`` with ``B`` the per-hyperplane map of
        :class:`~plumestats._scaling.DesignScaling` and ``J = I_K (x) B``, so
        ``X'X = B' (Z'Z) B`` and ``sum_n s_n s_n' = J' (sum_n s^z_n s^z_n') J``.
        """
        self._next_hessian = "hess"
        need = {"grad", "hess", "L", "gate"}
        need |= {"gram"} if gram else set()
        need |= {"meat"} if meat else set()
        self._fill(terms, need)
        sums = terms.sums
        rows = scaling.jacobian_to_internal()
        scores = np.kron(np.eye(self.k), rows)
        return DataSums(
            llf=float(sums["L"]),
            n_perfect=int(sums["n_perfect"]),
            gate_mass=np.asarray(sums["gate"], dtype=float),
            radius=float(self.source.moments["radius"]),
            gram=rows.T @ sums["gram"] @ rows if gram else None,
            meat=scores.T @ sums["meat"] @ scores if meat else None,
        )


@dataclass(frozen=True)
class DataSums:
    """What the results of a fit by row blocks need from the data, summed over
    the blocks at the estimates, in the user's units (see
    :meth:`BlockProblem.data_sums`).

    Attributes
    ----------
    llf : float
        :math:`L = \\sum_n l_n`.
    n_perfect : int
        Rows fitted with probability above ``1 - 1e-8``.
    gate_mass : ndarray, shape (K,)
        :math:`\\sum_n g_k(x_n)`.
    radius : float
        Largest row norm :math:`\\max_n \\|x_n\\|` of the raw design.
    gram : ndarray, shape (p, p), or None
        :math:`X'X` (when the collapsed-expert check needs it).
    meat : ndarray, shape (K p, K p), or None
        :math:`\\sum_n s_n s_n'` of the observation scores (for ``cov_type="HC0"``).
    """

    llf: float
    n_perfect: int
    gate_mass: np.ndarray
    radius: float
    gram: np.ndarray | None = None
    meat: np.ndarray | None = None


def _block_diagonal(blocks: np.ndarray) -> np.ndarray:
    k, p, _ = blocks.shape
    out = np.zeros((k * p, k * p))
    for j in range(k):  # K is small: a loop over experts only
        out[j * p : (j + 1) * p, j * p : (j + 1) * p] = blocks[j]
    return out
