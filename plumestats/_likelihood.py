"""The PLUME likelihood and its derivatives, as pure numpy functions.

Notation (one observation; the sums over n are taken by the callers):

* ``a_k = w_k' x`` is hyperplane ``k``'s score, ``A`` the ``(n, K)`` matrix of them.
* the gate is ``g = softmax(v)`` with ``v_k = -gamma * a_k``;
* the expert of hyperplane ``k`` gives ``sigmoid(y a_k)`` for ``y`` in ``{-1, +1}``;
* ``u_k = v_k + log sigmoid(y a_k)``, so that the observation's log-likelihood is
  ``l = LSE(u) - LSE(v)`` (``LSE`` is log-sum-exp) and the EM responsibilities are
  ``r = softmax(u)``.

Derivatives with respect to the scores (derived in ``docs/model.md`` and checked
against finite differences in the tests), with ``s_k = y sigmoid(-y a_k)``,
``h_k = sigmoid(a_k) sigmoid(-a_k)`` and ``e_k = s_k - gamma``::

    dl/da_k        = r_k s_k - gamma (r_k - g_k)
    d2l/da_k da_j  = delta_kj r_k (e_k^2 - h_k) - r_k e_k r_j e_j
                     - gamma^2 (delta_kj g_k - g_k g_j)

The EM surrogate for fixed responsibilities ``pi``,
``Q = sum_k pi_k [log g_k + log sigmoid(y a_k)]``, has the same gradient as ``l`` at
``pi = r`` and the negative semi-definite Hessian
``-delta_kj pi_k h_k - gamma^2 (delta_kj g_k - g_k g_j)``.

Every quantity is formed from scores shifted by their row minimum, so that no
finite input overflows: ``v - max(v) = -gamma (a - min_k a) <= 0``.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._design import DesignMatrix, as_design, upper_pairs

__all__ = [
    "Terms",
    "compute_hard_terms",
    "compute_terms",
    "face_major_product",
    "face_products",
    "gate_probabilities",
    "gram_blocks",
    "linear_scores",
    "log_expit",
    "pair_products",
    "predict_mean",
    "q_value",
    "responsibilities",
]


def linear_scores(params: np.ndarray, exog, k: int) -> np.ndarray:
    """Scores ``A[n, k] = w_k' x_n`` for the hyperplane-major parameter vector.

    Scores beyond the range of a double come out as +-inf (never NaN): the weights
    are then scaled down before the product and the scale applied after.
    """
    weights = np.reshape(params, (k, exog.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        scores = face_major_product(exog, weights)
        if np.isfinite(scores).all():  # the common case: no overflow, no NaN
            return scores
        peak = float(np.max(np.abs(weights)))
        scores = face_major_product(exog, weights / peak) * peak
    if np.isnan(scores).any():
        raise FloatingPointError(
            "the hyperplane scores overflowed (features of order 1e308); rescale "
            "the features"
        )
    return scores


def face_major_product(exog, weights: np.ndarray) -> np.ndarray:
    """``Z B'`` laid out face by face: the ``(n, K)`` transpose of ``B Z'``,
    each face's scores contiguous. Every per-row array derived from the
    scores inherits the layout, and the per-row work reads them a face at a
    time (the row reductions column by column, the Hessian weights by
    columns): on a slab of 16,384 x 21 at K = 3 the terms, derivatives and
    responsibilities took 4.2 ms against 5.3 ms from row-major scores, and
    the product itself 0.17 against 0.21 ms."""
    if isinstance(exog, DesignMatrix):
        return exog @ weights.T
    return (weights @ np.asarray(exog).T).T


def face_products(weights: np.ndarray, z) -> np.ndarray:
    """``weights[n, k] * z[n, j]`` as an ``(n, K p)`` array, face by face:
    each row's scores or Jacobian. Written into a row-major buffer, so that
    the reshape is a view whatever the layout of ``weights`` (column-major
    like the scores, it would copy the whole array)."""
    z = np.asarray(z)
    n, k = weights.shape
    out = np.empty((n, k, z.shape[1]))
    np.multiply(weights[:, :, None], z[:, None, :], out=out)
    # the width spelled out: -1 cannot be inferred for zero rows
    return out.reshape(n, k * z.shape[1])


def _row_reduce(ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
    """``ufunc.reduce(values, axis=1, keepdims=True)`` for an ``(n, K)`` array.

    Computed column by column: numpy reduces a short contiguous axis one row at
    a time, which for K = 2 on 27,000 rows took 3 ms against 0.1 ms for one
    elementwise ``ufunc`` of the two columns, and these reductions ran several
    times per likelihood evaluation.
    """
    out = values[:, :1].copy()
    for column in range(1, values.shape[1]):
        ufunc(out, values[:, column : column + 1], out=out)
    return out


def _shifted_gate_logits(scores: np.ndarray, gamma: float) -> np.ndarray:
    """``v - max_k v`` for ``v = -gamma * scores``; always <= 0, never NaN."""
    lowest = _row_reduce(np.minimum, scores)
    with np.errstate(over="ignore", invalid="ignore"):
        # a - min(a) can reach +inf for extreme scores; -inf is then the right gate
        # logit (that expert's gate weight is exactly zero). Ties at +-inf are 0
        # (a finite tie subtracts to 0 by itself).
        spread = scores - lowest
        if not np.isfinite(lowest).all():
            spread = np.where(scores == lowest, 0.0, spread)
        spread *= -gamma
        return spread


def _row_logsumexp(values: np.ndarray) -> np.ndarray:
    """``log sum_k exp(values[n, k])`` as an ``(n, 1)`` column.

    Plain numpy: for K columns this is several times faster than
    ``scipy.special.logsumexp``, whose array-API layer dominates at this size.
    """
    peak = _row_reduce(np.maximum, values)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    shifted = values - peak
    np.exp(shifted, out=shifted)
    with np.errstate(divide="ignore"):
        # a row of -inf (every term underflowed) has log-sum -inf
        return peak + np.log(_row_reduce(np.add, shifted))


class Terms:
    """Per-observation quantities shared by the likelihood, its derivatives and EM.

    Built from the log gate and log expert probabilities; everything else is
    derived on first use, so that a line-search trial that only needs ``L`` (or
    ``Q``) pays for nothing more.

    Attributes
    ----------
    loglikeobs : ndarray, shape (n,)
        Observation log-likelihoods ``l_n`` (at most 0).
    log_lik : ndarray, shape (n, 1)
        The same, as computed (a column, before the clip at 0).
    log_gate, log_expert : ndarray, shape (n, K)
        ``log g_nk`` and ``log sigmoid(y_n a_nk)``.
    resp : ndarray, shape (n, K)
        EM responsibilities ``r_nk`` (posterior probability of expert ``k``).
    gate : ndarray, shape (n, K)
        Gate probabilities ``g_nk``.
    slope : ndarray, shape (n, K)
        ``s_nk = y_n sigmoid(-y_n a_nk)``, the derivative of ``log sigmoid(y a)``.
    curvature : ndarray, shape (n, K)
        ``h_nk = sigmoid(a_nk) sigmoid(-a_nk)``.
    """

    def __init__(self, scores, y_pm, log_gate, log_expert, log_lik=None):
        self.scores = scores
        self.y_pm = y_pm
        self.log_gate = log_gate
        self.log_expert = log_expert
        # the mixture's log-likelihood, log-sum-exp of the joint by default
        self.log_lik = _row_logsumexp(self.joint) if log_lik is None else log_lik
        # a probability's log is <= 0; rounding in the normalised gate can give +eps
        self.loglikeobs = np.minimum(self.log_lik[:, 0], 0.0)

    @cached_property
    def joint(self) -> np.ndarray:
        """``log g_nk + log sigmoid(y_n a_nk)``."""
        with np.errstate(over="ignore"):
            # two logs near -1e308 add up to -inf, which is the right answer
            return self.log_gate + self.log_expert

    @cached_property
    def resp(self) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            resp = self.joint - self.log_lik
            np.exp(resp, out=resp)
        return _share_unknown_evenly(resp)

    @cached_property
    def gate(self) -> np.ndarray:
        return np.exp(self.log_gate)

    @cached_property
    def slope(self) -> np.ndarray:
        # sigmoid(-y a) = 1 - sigmoid(y a) = -expm1(log sigmoid(y a)): from the
        # log expert to full relative precision, seven times faster than expit
        slope = np.expm1(self.log_expert)
        np.negative(slope, out=slope)
        slope *= self.y_pm[:, None]
        return slope

    @cached_property
    def curvature(self) -> np.ndarray:
        # sigmoid(a) sigmoid(-a) = sigmoid(y a) sigmoid(-y a): both factors are
        # known (exp(log_expert), |slope|) to full relative precision, which
        # saves two logistic functions per Hessian
        curvature = np.exp(self.log_expert)
        curvature *= self.slope
        return np.abs(curvature, out=curvature)

    def score_weights(self, gamma: float) -> np.ndarray:
        """``dl_n / da_nk``; also the gradient of Q at ``pi = resp``."""
        gate_part = self.resp - self.gate
        gate_part *= gamma
        weights = self.resp * self.slope
        weights -= gate_part
        return weights

    def hessian_weights(self, gamma: float) -> np.ndarray:
        """``d2 l_n / da_nk da_nj`` for the pairs ``k <= j`` of
        :func:`upper_pairs`, as an ``(n, K (K + 1) / 2)`` array."""
        excess = self.slope - gamma
        r_e = self.resp * excess
        weights = pair_products(self.gate)
        weights *= gamma**2
        weights -= pair_products(r_e)
        own = excess**2
        own -= self.curvature
        own *= self.resp
        # column by column: indexing the diagonal columns together copies
        # them out and back (a third of the function's time on adult)
        for face, column in enumerate(_diagonal_columns(self.gate.shape[1])):
            weights[:, column] += own[:, face]
            weights[:, column] -= gamma**2 * self.gate[:, face]
        return weights

    def q_hessian_weights(self, gamma: float, resp: np.ndarray) -> np.ndarray:
        """Hessian weights of the EM surrogate Q for fixed responsibilities,
        as :meth:`hessian_weights` lays them out."""
        weights = pair_products(self.gate)
        weights *= gamma**2
        own = resp * self.curvature
        own += gamma**2 * self.gate
        for face, column in enumerate(_diagonal_columns(self.gate.shape[1])):
            weights[:, column] -= own[:, face]
        return weights


def _diagonal_columns(k: int) -> np.ndarray:
    """The columns of the pairs ``(k, k)`` in :func:`upper_pairs`' layout."""
    return np.array([b for b, (row, col) in enumerate(upper_pairs(k)) if row == col])


def pair_products(left: np.ndarray, right: np.ndarray | None = None) -> np.ndarray:
    """``left[:, k] * right[:, j]`` for the pairs of :func:`upper_pairs`, an
    ``(n, K (K + 1) / 2)`` array stored by columns.

    Only the distinct pairs of a symmetric per-row ``(K, K)`` array are
    formed (6 of 9 numbers at K = 3), each column contiguous, as the Gram
    products read them (:meth:`DesignMatrix.gram_blocks`).
    """
    right = left if right is None else right
    pairs = upper_pairs(left.shape[1])
    out = np.empty((left.shape[0], len(pairs)), order="F")
    for column, (row, col) in enumerate(pairs):
        np.multiply(left[:, row], right[:, col], out=out[:, column])
    return out


def compute_terms(scores: np.ndarray, y_pm: np.ndarray, gamma: float) -> Terms:
    """All per-observation terms at the given scores.

    Parameters
    ----------
    scores : ndarray, shape (n, K)
        Hyperplane scores ``a_nk``.
    y_pm : ndarray, shape (n,)
        Outcome coded ``+1`` (inside) / ``-1`` (outside).
    gamma : float
        Gate sharpness.
    """
    gate_logits = _shifted_gate_logits(scores, gamma)
    # the shifted logits peak at exactly 0, so no further shift is needed
    unnormalised = np.exp(gate_logits)
    total = _row_reduce(np.add, unnormalised)
    log_gate = gate_logits
    log_gate -= np.log(total)
    log_expert = _log_expit_in_place(y_pm[:, None] * scores)
    terms = Terms(scores, y_pm, log_gate, log_expert)
    unnormalised /= total  # what exp(log_gate) would give, one pass less
    terms.gate = unnormalised
    return terms


def responsibilities(scores: np.ndarray, y_pm: np.ndarray, gamma: float) -> np.ndarray:
    """The EM responsibilities alone, ``r_nk = softmax_k(-gamma a_nk + log
    sigmoid(y_n a_nk))``: :attr:`Terms.resp` (the same to rounding), without
    the normalised gate and the log-likelihood.

    A line-search trial of an EM step on blocks needs the responsibilities of
    its base point, which no pass over blocks keeps: about half the
    elementwise work of :func:`compute_terms`. A row whose terms are all
    ``-inf`` is shared evenly, as in :attr:`Terms.resp`.
    """
    resp = _shifted_gate_logits(scores, gamma)
    with np.errstate(over="ignore"):
        resp += _log_expit_in_place(y_pm[:, None] * scores)
    peak = _row_reduce(np.maximum, resp)
    with np.errstate(invalid="ignore"):
        resp -= peak  # a row of -inf becomes NaN
        np.exp(resp, out=resp)
        resp /= _row_reduce(np.add, resp)
    return _share_unknown_evenly(resp)


def _share_unknown_evenly(resp: np.ndarray) -> np.ndarray:
    """``resp`` with the NaN of an observation whose likelihood underflowed
    entirely (every term ``-inf``) replaced by ``1 / K``: no face explains
    it better than another."""
    unknown = np.isnan(resp)
    if unknown.any():
        resp[unknown] = 1.0 / resp.shape[1]
    return resp


def log_expit(values: np.ndarray) -> np.ndarray:
    """``log sigmoid(x) = min(x, 0) - log1p(exp(-|x|))``, never overflowing.

    The same numbers as ``scipy.special.log_expit`` to a relative 5e-16 (from
    -800 to 800, and at +-inf), in a third of its time: on the (n, K) scores
    of every likelihood evaluation it was the dearest elementwise function.
    """
    return _log_expit_in_place(np.array(values, dtype=float))[()]


def _log_expit_in_place(values: np.ndarray) -> np.ndarray:
    """:func:`log_expit` overwriting ``values`` (one temporary, not four)."""
    tail = np.empty_like(values)
    np.abs(values, out=tail)
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    np.log1p(tail, out=tail)
    np.minimum(values, 0.0, out=values)
    values -= tail
    return values


def compute_hard_terms(scores: np.ndarray, y_pm: np.ndarray) -> Terms:
    """Terms of the hard-gating model (SPLA1), ``P(y | x) = sigmoid(y min_k a_k)``.

    The limit of PLUME as gamma grows: the gate and the responsibilities are both
    the indicator of the arg-min hyperplane, so every formula of :class:`Terms`
    applies unchanged (with ``r = g`` the gamma terms cancel; the Hessian weight is
    ``-h`` on the active hyperplane and zero elsewhere). The log-likelihood is not
    differentiable where two scores tie, a set of measure zero.
    """
    return _HardTerms(scores, y_pm)


class _HardTerms(Terms):
    """:class:`Terms` of the hard gate, with the log-likelihood computed from
    the smallest score alone and the per-face logs only when asked for: most
    of SPLA1's evaluations are line-search trials that need ``L`` and nothing
    else (its Newton steps cross kinks, and their searches shorten them).
    ``log_expit`` of the smallest score is the number the ``(n, K)`` array
    holds at the owning face, so ``L`` is the same to the last bit."""

    def __init__(self, scores: np.ndarray, y_pm: np.ndarray):
        self.scores = scores
        self.y_pm = y_pm
        self.log_lik = _log_expit_in_place(
            y_pm[:, None] * _row_reduce(np.minimum, scores)
        )
        self.loglikeobs = np.minimum(self.log_lik[:, 0], 0.0)

    @cached_property
    def log_expert(self) -> np.ndarray:
        return _log_expit_in_place(self.y_pm[:, None] * self.scores)

    @cached_property
    def log_gate(self) -> np.ndarray:
        owner = np.argmin(self.scores, axis=1)
        onehot = owner[:, None] == np.arange(self.scores.shape[1])[None, :]
        return np.where(onehot, 0.0, -np.inf)


def q_value(terms: Terms, resp: np.ndarray) -> float:
    """EM surrogate ``Q = sum_nk pi_nk [log g_nk + log sigmoid(y_n a_nk)]``.

    Terms with ``pi_nk = 0`` contribute nothing even where the log is ``-inf``.
    """
    return float(np.sum(resp * np.where(resp > 0, terms.joint, 0.0)))


def gram_blocks(exog, weights: np.ndarray) -> np.ndarray:
    """Assemble ``sum_n W_n[k, j] x_n x_n'`` into a ``(K p, K p)`` matrix
    from the per-row pairs ``k <= j`` (:func:`upper_pairs`; see
    :meth:`DesignMatrix.gram_blocks`); ``exog`` is an array or a
    :class:`DesignMatrix`."""
    return as_design(exog).gram_blocks(weights)


def gate_probabilities(scores: np.ndarray, gamma: float) -> np.ndarray:
    """``g_k = softmax_k(-gamma a_k)``, from the shifted (never overflowing) logits."""
    gate = np.exp(_shifted_gate_logits(scores, gamma))
    return gate / _row_reduce(np.add, gate)


def predict_mean(scores: np.ndarray, gamma: float, sign: float = 1.0) -> np.ndarray:
    """``sum_k g_k sigmoid(sign * a_k)``: P(inside | x) for ``sign=1``, P(outside)
    for ``sign=-1`` (computed directly, not as one minus, to keep small tails)."""
    gate_logits = _shifted_gate_logits(scores, gamma)
    with np.errstate(over="ignore"):
        joint = gate_logits + log_expit(sign * scores)
    log_p = _row_logsumexp(joint) - _row_logsumexp(gate_logits)
    return np.minimum(np.exp(log_p[:, 0]), 1.0)
