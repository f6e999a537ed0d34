r"""The objectives: the per-row maths of a model, as sums over a block of rows.

An objective turns a parameter vector and a block of standardised rows into
what the engine asks for (the log-likelihood, the EM surrogate ``Q``, the
gradient, the Hessians of ``L`` and ``Q``, and what the results and the
diagnostics need), as statsmodels' GLM families carry the maths of one IRLS
loop. Two objectives serve every model:

* :class:`PlumeObjective`, ``l = log sum_k g_k sigma(y w_k'x)`` with the gate of
  the spec (PLUME's soft gate, SPLA1's hard one);
* :class:`FlipObjective`, the same with a share of labels flipped at random
  (Copas, 1988): ``l = log(lam/2 + (1 - lam) p)``, ``lam = expit(eta)``, whose
  EM treats "flipped or not" as one more latent label.

Each works in two steps: :meth:`rows` computes the per-row state of one block
at a parameter vector (reusable: a fit in memory keeps it for the next
question at the same point), and :meth:`sums` reduces it to the quantities
named in ``need``. :func:`slab_sums` does both for one slab of rows at once,
the kernel a fit by blocks maps over its blocks' slabs
(``plumestats._rows``) and Dask over its partitions. Notation and
derivatives:
``plumestats._likelihood`` (PLUME) and ``docs/model.md`` (label flips)::

    dl/dtheta = s dL/dtheta,  dl/deta = r - lam,
    d2l/dtheta2 = s d2L + s r (dL)(dL)',  d2l/deta dtheta = -s r dL,
    d2l/deta2 = r s - lam (1 - lam)

with ``r = lam / (2 q)`` the posterior probability that a label is noise and
``s = 1 - r``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit, logit

from ._design import as_design
from ._likelihood import (
    Terms,
    face_major_product,
    face_products,
    linear_scores,
    pair_products,
    q_value,
)
from ._weights import weighted_table

__all__ = [
    "BOUNDARY_LAM",
    "PERFECT_LOGPROB",
    "FlipObjective",
    "FlipRows",
    "PlumeObjective",
    "block_confusion",
    "combine_sums",
    "slab_rows",
    "slab_sums",
]

# An observation fitted with probability above 1 - 1e-8 for its own class is
# "perfectly fitted": at a (quasi-)separated fit every observation a diverging
# direction moves is.
PERFECT_LOGPROB = -1e-8
# Below this share of coin-toss labels (eps = 5e-9) the flip rate is taken to be
# at its boundary, zero: the likelihood then rises ever more slowly as lam -> 0
# (dl/deta = lam * (mean(1 / 2p) - 1) < 0), Newton steps on eta stay at about
# -1 for ever, and the fit is PLUME's.
BOUNDARY_LAM = 1e-8
_LOG_HALF = np.log(0.5)
# Sums combined by maximum, not addition.
_MAX_KEYS = frozenset({"moved", "max_abs_move"})
# The size of a slab's (rows, K (K + 1) / 2) Hessian weights, the widest of
# its per-row arrays. Large per-row arrays are dear beyond their arithmetic:
# glibc's malloc serves an array above its mmap threshold (which adapts up to
# 32 MiB on 64-bit Linux) with fresh pages from the kernel, and the dozens of
# temporaries of every pass fault their pages in again (at 1e7 x 21, K = 3 the
# kernel's share was 4.3 of the 7.5 s of an iteration). Small slabs reuse the
# same memory, in cache. 16384 rows at K = 3: at 1e7 x 21, slabs of 4096,
# 16384 and 65536 rows took 5.6, 4.8 and 6.8 s per iteration.
_SLAB_BYTES = 16384 * 6 * 8


def combine_sums(left: dict, right: dict) -> dict:
    """Add two blocks' sums (maxima for the ``max`` quantities)."""
    return {
        key: np.maximum(value, right[key]) if key in _MAX_KEYS else value + right[key]
        for key, value in left.items()
    }


def slab_rows(k: int) -> int:
    """Rows of the slabs a block's per-row work is done in: its ``(rows,
    K (K + 1) / 2)`` arrays stay near :data:`_SLAB_BYTES`, and at least 1024
    rows (numpy's per-call overhead)."""
    return max(1024, _SLAB_BYTES // (4 * k * (k + 1)))


def slab_sums(
    z: np.ndarray,
    y: np.ndarray,
    *,
    objective,
    params: np.ndarray,
    need: frozenset,
    base: np.ndarray | None = None,
    anchor: np.ndarray | None = None,
    direction: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> dict:
    """The sums over one slab of rows that the engine needs at ``params``,
    evaluated at once. Dask's partitions are: at 1e7 x 21, K = 3 with
    partitions of 250,000 rows, slabs within them took 5.9 to 6.6 s per
    iteration against 5.0 to 5.6 s whole (two workers, alternated runs).

    ``need`` names them: ``"L"`` (log-likelihood), ``"n_perfect"`` (the count
    of perfectly fitted rows), ``"Q"`` (surrogate with the responsibilities
    at ``base``), ``"Qself"`` (with those at ``params``), ``"moved"`` (largest
    change of a score from ``anchor``), ``"grad"``, ``"hess"`` (of ``l``),
    ``"qhess"`` (of Q at its own responsibilities), ``"noise"`` (summed
    posterior of a flipped label), ``"gate"``, ``"meat"``, ``"gram"``,
    ``"resp_gram"`` and ``"max_abs_move"`` (largest ``|z' direction_k|``).
    """
    design = as_design(z)
    with_base = "Q" in need
    # a line-search trial of an EM step: the iterate is both base and anchor
    with_anchor = "moved" in need and not (with_base and anchor is base)
    points = [params] + [base] * with_base + [anchor] * with_anchor
    scores = iter(scores_of(points, design, objective))
    rows = objective.rows(design, y, params, scores=next(scores))
    base_rows = (
        objective.base_rows(design, y, base, scores=next(scores)) if with_base else None
    )
    anchor_scores = None
    if "moved" in need:
        anchor_scores = next(scores) if with_anchor else base_rows.scores
    return objective.sums(
        design,
        rows,
        need,
        base=base_rows,
        anchor_scores=anchor_scores,
        direction=direction,
        weights=weights,
    )


def scores_of(points: list, design, objective) -> list[np.ndarray]:
    """The scores ``Z B'`` of each point's faces, from one product: reading
    a slab once for a trial and its anchor costs about what one point does
    (16,384 x 21 by 3 and by 6 faces: 0.17 and 0.20 ms). The scores are
    laid out face by face, so each point's are a contiguous block."""
    n_weights, k = objective.n_weights(design), objective.k
    stacked = np.concatenate([point[:n_weights] for point in points])
    with np.errstate(over="ignore", invalid="ignore"):
        joint = face_major_product(design, stacked.reshape(-1, design.shape[1]))
    if not np.isfinite(joint).all():
        # scores beyond a double's range: each point scaled by its own weights
        # (one scale for all would push the smaller point's into subnormals)
        return [linear_scores(point[:n_weights], design, k) for point in points]
    return [joint[:, i * k : (i + 1) * k] for i in range(len(points))]


def block_confusion(z, y, *, objective, params, threshold, weights=None) -> dict:
    """``results.pred_table``'s counts on one block of standardised rows
    (internal parameters give the same scores)."""
    rows = objective.rows(as_design(z), y, params)
    return {"confusion": objective.confusion(rows, threshold, weights)}


class PlumeObjective:
    """PLUME's (or SPLA1's) log-likelihood, by the spec's gate.

    Parameters
    ----------
    spec : ModelSpec
        K, the gate and the sign of the inside class.
    """

    n_extra = 0
    # with the Newton finish, only Newton steps end a run (EM can crawl)
    settles_on_em_steps = False
    diverging_message = (
        "diverging: the weights grow without bound while L barely rises "
        "(separation; the maximum is at infinity)"
    )

    def __init__(self, spec):
        self.spec = spec
        self.k = spec.k
        self.gate = spec.gate
        self.gamma = spec.gate.weight_gamma

    def n_weights(self, z) -> int:
        return self.k * z.shape[1]

    def rows(self, design, y: np.ndarray, params: np.ndarray, scores=None) -> Terms:
        """The per-row :class:`~plumestats._likelihood.Terms` at ``params``
        (whose ``scores`` the caller may have computed)."""
        if scores is None:
            scores = linear_scores(params, design, self.k)
        return self.gate.terms(scores, y)

    def base_rows(
        self, design, y: np.ndarray, params: np.ndarray, scores=None
    ) -> BaseRows:
        """What ``Q`` and the score movement read of an EM step's base point,
        which a line-search trial on blocks computes again: the scores and the
        responsibilities, not every term of :meth:`rows` (0.5 against 1.9 ms
        on a slab of 16,384 rows at K = 3; an EM trial's pass over 3e6 x 21
        took 1.44 s against 1.48 s)."""
        if scores is None:
            scores = linear_scores(params, design, self.k)
        return BaseRows(scores, self.gate.responsibilities(scores, y))

    # ------------------------------------------------------------- the sums
    def sums(
        self,
        design,
        rows: Terms,
        need,
        *,
        base=None,
        anchor_scores=None,
        direction=None,
        weights=None,
    ) -> dict:
        """``need``'s sums over the block (``weights``: per-row weights of the
        observations, as the label-flip EM gives them)."""
        out: dict = {}
        w = (lambda a: a) if weights is None else _weighter(weights)
        if "L" in need:
            with np.errstate(over="ignore"):  # terms near -1e308 sum to -inf
                out["L"] = np.array(w(rows.loglikeobs).sum())
        if "n_perfect" in need:
            out["n_perfect"] = _n_perfect(rows.loglikeobs, weights)
        if "Qself" in need:
            out["Qself"] = np.array(q_value(rows, w(rows.resp)))
        if "Q" in need:
            out["Q"] = np.array(q_value(rows, w(base.resp)))
        if "moved" in need:
            out["moved"] = _max_abs(rows.scores - anchor_scores)
        if "grad" in need:
            out["grad"] = (w(rows.score_weights(self.gamma)).T @ design).ravel()
        if "hess" in need:
            out["hess"] = design.gram_blocks(w(rows.hessian_weights(self.gamma)))
        if "qhess" in need:
            qhess = rows.q_hessian_weights(self.gamma, rows.resp)
            out["qhess"] = design.gram_blocks(w(qhess))
        self._data_sums(design, rows, need, out, direction, weights)
        return out

    def _data_sums(self, design, rows: Terms, need, out, direction, weights) -> None:
        """What the results, the diagnostics and the separation check read
        (each row counted ``weights`` times)."""
        w = (lambda a: a) if weights is None else _weighter(weights)
        if "gate" in need:
            out["gate"] = w(rows.gate).sum(axis=0)
        if "meat" in need:
            scores = self.score_rows(design, rows)
            out["meat"] = w(scores).T @ scores
        if "gram" in need:
            # through the design's Grams: a split design's cost O(nnz) in its
            # indicators (adult: 1.3 against 10 ms for Z'Z)
            counts = np.ones(design.shape[0]) if weights is None else weights
            out["gram"] = design.gram(counts)
        if "resp_gram" in need:
            perfect = rows.loglikeobs > PERFECT_LOGPROB
            resp = w(rows.resp)
            # all 2 K Grams in one call (one pass over a dense design's rows)
            grams = design.grams(np.hstack([resp, resp * perfect[:, None]]))
            out["resp_gram"] = grams[: self.k]
            out["resp_gram_perfect"] = grams[self.k :]
        if "max_abs_move" in need:
            moves = design @ direction[: self.k * design.shape[1]].reshape(self.k, -1).T
            out["max_abs_move"] = _max_abs(moves)
        if "confusion" in need:
            out["confusion"] = self.confusion(rows, 0.5, weights)

    def class1_probability(self, rows: Terms) -> np.ndarray:
        """P(y = 1 | x) of each row (the class coded 1, inside or not)."""
        return self.gate.mean(rows.scores, self.spec.sign)

    def confusion(self, rows, threshold: float, weights=None) -> np.ndarray:
        """Counts of observed 0/1 against predicted at ``threshold``."""
        terms = rows.terms if isinstance(rows, FlipRows) else rows
        observed = (terms.y_pm * self.spec.sign > 0).astype(float)
        predicted = self.class1_probability(rows) > threshold
        return weighted_table(observed, predicted, weights)

    def score_rows(self, design, rows: Terms) -> np.ndarray:
        """The observation scores ``(n_b, K p)``."""
        return face_products(rows.score_weights(self.gamma), design.values)

    # ----------------------------------------------------- the EM step
    def em_step(self, problem, params, terms, grad, solver, boundary: bool):
        """One EM iteration: an ascent step of ``solver`` on Q at the
        responsibilities of ``params`` (on L itself for a gate whose surrogate
        is no minorizer). Returns ``(params, terms, full_newton, direction)``
        or ``None``."""
        if not self.gate.minorizes:
            evaluate = problem.evaluate_objective
            base = problem.objective_value(params, terms)
        else:

            def evaluate(trial):
                trial_terms = problem.terms(trial)
                return problem.surrogate(trial, trial_terms, terms), trial_terms

            base = problem.surrogate(params, terms, terms)
        return solver(problem, evaluate, params, terms, grad, base)

    def free(self, params, grad, boundary: bool) -> slice:
        """The coordinates the Newton steps move."""
        return slice(None)

    def at_boundary(self, problem, terms, grad, boundary: bool) -> bool:
        return False


@dataclass
class BaseRows:
    """The scores and responsibilities of one slab at an EM step's base."""

    scores: np.ndarray
    resp: np.ndarray


@dataclass
class FlipRows:
    """Per-row quantities of the label-flip model at ``[theta, eta]``."""

    terms: Terms
    eta: float
    loglikeobs: np.ndarray
    noise: np.ndarray
    clean: np.ndarray

    @property
    def lam(self) -> float:
        """Share of labels that are coin tosses, ``2 eps``."""
        return float(expit(self.eta))

    @property
    def scores(self) -> np.ndarray:
        return self.terms.scores


class FlipObjective:
    """The label-flip model's log-likelihood: PLUME's, diluted by coin tosses.

    The parameter vector is PLUME's weights followed by ``eta``; the EM treats
    "noise or PLUME" as one more latent label: the E-step gives ``r``, the
    M-step sets ``lam`` to the mean of ``r`` (closed form) and raises PLUME's
    surrogate weighted by ``s = 1 - r``.
    """

    n_extra = 1
    # an EM step with a tiny change and a small gradient ends a run
    settles_on_em_steps = True
    diverging_message = (
        "diverging: the weights grow without bound while L barely rises (the "
        "clean labels are separable once flips explain the rest; the maximum is "
        "at infinity)"
    )

    def __init__(self, spec):
        self.spec = spec
        self.k = spec.k
        self.plume = PlumeObjective(spec)
        self.gamma = self.plume.gamma

    def n_weights(self, z) -> int:
        return self.k * z.shape[1]

    def base_rows(
        self, design, y: np.ndarray, params: np.ndarray, scores=None
    ) -> FlipRows:
        """Q's clean-label weights need the whole state (see
        :meth:`PlumeObjective.base_rows`)."""
        return self.rows(design, y, params, scores=scores)

    def rows(self, design, y: np.ndarray, params: np.ndarray, scores=None) -> FlipRows:
        """``r`` and ``s`` are formed from logs, so that neither loses its
        relative precision when the other is close to one."""
        eta = float(params[-1])
        terms = self.plume.rows(design, y, params[:-1], scores=scores)
        log_noise = log_expit(eta) + _LOG_HALF
        log_clean = log_expit(-eta) + terms.loglikeobs
        loglikeobs = np.logaddexp(log_noise, log_clean)
        return FlipRows(
            terms=terms,
            eta=eta,
            loglikeobs=loglikeobs,
            noise=np.exp(log_noise - loglikeobs),
            clean=np.exp(log_clean - loglikeobs),
        )

    def sums(
        self,
        design,
        rows: FlipRows,
        need,
        *,
        base=None,
        anchor_scores=None,
        direction=None,
        weights=None,
    ) -> dict:
        w = (lambda a: a) if weights is None else _weighter(weights)
        n_units = rows.noise.size if weights is None else float(np.sum(weights))
        out: dict = {}
        terms = rows.terms
        clean = w(rows.clean)
        noise = float(w(rows.noise).sum())
        if "L" in need:
            out["L"] = np.array(w(rows.loglikeobs).sum())
        if "n_perfect" in need:
            out["n_perfect"] = _n_perfect(rows.loglikeobs, weights)
        if "Qself" in need:
            out["Qself"] = np.array(q_value(terms, clean[:, None] * terms.resp))
        if "Q" in need:
            out["Q"] = np.array(
                q_value(terms, w(base.clean)[:, None] * base.terms.resp)
            )
        if "moved" in need:
            out["moved"] = _max_abs(terms.scores - anchor_scores)
        if "noise" in need:
            out["noise"] = np.array(noise)
        if "grad" in need or "hess" in need:
            plume = terms.score_weights(self.gamma)
        if "grad" in need:
            theta = ((clean[:, None] * plume).T @ design).ravel()
            eta = noise - n_units * rows.lam
            out["grad"] = np.append(theta, eta)
        if "hess" in need:
            out["hess"] = self._hessian(design, rows, plume, w, n_units)
        if "qhess" in need:
            qhess = terms.q_hessian_weights(self.gamma, terms.resp)
            out["qhess"] = design.gram_blocks(clean[:, None] * qhess)
        if "meat" in need:
            scores = self.score_rows(design, rows)
            out["meat"] = w(scores).T @ scores
        self.plume._data_sums(
            design, terms, need - {"meat", "confusion"}, out, direction, weights
        )
        if "confusion" in need:
            out["confusion"] = self.confusion(rows, 0.5, weights)
        return out

    def _hessian(self, design, rows: FlipRows, plume, w, n_units) -> np.ndarray:
        """The Hessian of ``l`` in ``[theta, eta]``, ``(K p + 1, K p + 1)``
        (each row counted as ``w`` weighs it, ``n_units`` rows in all)."""
        both = w(rows.clean * rows.noise)
        weights = w(rows.clean)[:, None] * rows.terms.hessian_weights(self.gamma)
        weights += both[:, None] * pair_products(plume)
        size = self.k * design.shape[1]
        hess = np.empty((size + 1, size + 1))
        hess[:size, :size] = design.gram_blocks(weights)
        cross = -np.ravel((both[:, None] * plume).T @ design)
        hess[:size, size] = hess[size, :size] = cross
        lam = rows.lam
        hess[size, size] = float(np.sum(both)) - n_units * lam * (1.0 - lam)
        return hess

    def class1_probability(self, rows: FlipRows) -> np.ndarray:
        """P(y = 1 | x) of the labels as observed: ``eps + (1 - 2 eps) P``."""
        lam = rows.lam
        return lam / 2 + (1.0 - lam) * self.plume.class1_probability(rows.terms)

    def confusion(self, rows: FlipRows, threshold: float, weights=None) -> np.ndarray:
        return PlumeObjective.confusion(self, rows, threshold, weights)

    def score_rows(self, design, rows: FlipRows) -> np.ndarray:
        """The observation scores ``(n_b, K p + 1)``."""
        theta = rows.clean[:, None] * self.plume.score_rows(design, rows.terms)
        return np.column_stack([theta, rows.noise - rows.lam])

    # ----------------------------------------------------- the EM step
    def em_step(self, problem, params, terms, grad, solver, boundary: bool):
        """``lam`` in closed form, then one PLUME M-step on the hyperplanes,
        weighted by ``s``, on the surrogate of the same E-step (so the objective
        cannot fall). No ascent on Q: the hyperplanes stay, ``lam`` still moves.
        """
        lam = float(problem.noise_share(terms))
        lam = min(max(lam, BOUNDARY_LAM), 1.0 - BOUNDARY_LAM)
        eta = logit(BOUNDARY_LAM) if boundary else float(logit(lam))
        theta, eta_now = params[:-1], params[-1]

        def evaluate(trial):
            trial_terms = problem.terms(np.append(trial, eta_now))
            return problem.surrogate(trial, trial_terms, terms), trial_terms

        base = problem.surrogate(theta, terms, terms)
        outcome = solver(problem, evaluate, theta, terms, grad[:-1], base)
        new_theta = theta if outcome is None else outcome[0]
        new_params = np.append(new_theta, eta)
        return new_params, problem.terms(new_params), False, None

    def free(self, params, grad, boundary: bool) -> slice:
        return slice(0, params.size - 1) if boundary else slice(None)

    def at_boundary(self, problem, terms, grad, boundary: bool) -> bool:
        """Whether ``lam`` has reached its floor with a negative slope (then
        held there for the rest of the run)."""
        if boundary:
            return True
        lam = float(expit(terms.params[-1]))
        return bool(lam <= BOUNDARY_LAM * 1.0001 and grad[-1] < 0)


def _weighter(weights: np.ndarray):
    def weighted(per_row: np.ndarray) -> np.ndarray:
        return per_row * weights.reshape((-1,) + (1,) * (per_row.ndim - 1))

    return weighted


def _n_perfect(loglikeobs: np.ndarray, weights=None) -> np.ndarray:
    """The observations fitted with probability near 1 (weighted: units)."""
    perfect = loglikeobs > PERFECT_LOGPROB
    return np.array(float(np.sum(perfect if weights is None else weights[perfect])))


def _max_abs(values: np.ndarray) -> np.ndarray:
    return np.array(float(np.max(np.abs(values), initial=0.0)))
