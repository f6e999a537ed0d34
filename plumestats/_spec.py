"""The specification of a model, frozen: K, the gate, which class is inside,
the objective and the penalty.

It travels as one value instead of loose ``(k, gamma, hard, sign)`` arguments:
the model holds one (:attr:`PolyhedralMixtureLogit.spec`), a fit derives one
with its penalty (:meth:`ModelSpec.with_penalty`), and every engine function
and row-block kernel reads what it needs from it. The gate is a plug-in, as
statsmodels' ``OrderedModel`` takes its distribution: :class:`SoftGate`
(PLUME's softmax with sharpness gamma) or :class:`HardGate` (the arg-min face
owns the point: SPLA1, PLUME's gamma -> infinity limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from ._likelihood import (
    Terms,
    compute_hard_terms,
    compute_terms,
    gate_probabilities,
    predict_mean,
    responsibilities,
)
from ._objectives import FlipObjective, PlumeObjective

__all__ = ["INTERNAL_API", "HardGate", "ModelSpec", "SoftGate"]


@dataclass(frozen=True)
class SoftGate:
    r"""PLUME's gate, :math:`g_k = \operatorname{softmax}_k(-\gamma\, w_k'x)`."""

    gamma: float

    name = "soft"
    # the EM surrogate Q minorizes L (a generalised EM); L is smooth
    minorizes = True
    kinked = False

    @property
    def weight_gamma(self) -> float:
        """The gamma of the score and Hessian weights (:class:`Terms`)."""
        return self.gamma

    def terms(self, scores: np.ndarray, y_pm: np.ndarray) -> Terms:
        return compute_terms(scores, y_pm, self.gamma)

    def responsibilities(self, scores: np.ndarray, y_pm: np.ndarray) -> np.ndarray:
        """:attr:`Terms.resp` alone (to rounding)."""
        return responsibilities(scores, y_pm, self.gamma)

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        return gate_probabilities(scores, self.gamma)

    def mean(self, scores: np.ndarray, sign: float) -> np.ndarray:
        """P(class coded 1 | x) from the scores (``sign`` +1: it is inside)."""
        return predict_mean(scores, self.gamma, sign)


@dataclass(frozen=True)
class HardGate:
    r"""SPLA1's gate: the face with the smallest score owns the point,
    :math:`P(y \mid x) = \sigma(y \min_k w_k'x)`."""

    name = "hard"
    gamma = math.inf
    # the alternating surrogate is no minorizer: M-steps search on L itself,
    # whose kinks (where scores tie) also end a fit on a small relative change
    minorizes = False
    kinked = True
    # with r = g the gamma terms of the weights cancel for any finite value
    weight_gamma = 1.0

    def terms(self, scores: np.ndarray, y_pm: np.ndarray) -> Terms:
        return compute_hard_terms(scores, y_pm)

    def responsibilities(self, scores: np.ndarray, y_pm: np.ndarray) -> np.ndarray:
        """:attr:`Terms.resp`: the owning face's indicator, as the gate (and
        ``1 / K`` on a row whose likelihood is zero). Never on a hot path:
        the hard gate's M-steps climb ``L``, not ``Q``."""
        return compute_hard_terms(scores, y_pm).resp

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        owner = scores.argmin(axis=1)
        return (owner[:, None] == np.arange(scores.shape[1])).astype(float)

    def mean(self, scores: np.ndarray, sign: float) -> np.ndarray:
        return expit(sign * scores.min(axis=1))


Gate = SoftGate | HardGate


@dataclass(frozen=True)
class ModelSpec:
    """What the engine needs to know of a model, besides its data.

    Attributes
    ----------
    k : int
        Number of faces (hyperplanes).
    gate : SoftGate or HardGate
        How the faces share a point.
    sign : float
        +1 when the class coded 1 is the inside of the polyhedron, -1 when the
        class coded 0 is.
    flips : bool
        Whether the labels are modelled as flipped at random at an estimated
        rate (the label-flip objective, one extra parameter).
    alpha : float
        L2 penalty per observation on the standardised slopes, a term of
        several columns by their correlation (0 for a model; a fit sets it,
        :meth:`with_penalty`; the metric is the problem's,
        :mod:`plumestats._penalty`).
    """

    k: int
    gate: Gate
    sign: float = 1.0
    flips: bool = False
    alpha: float = 0.0

    @property
    def n_extra(self) -> int:
        """Parameters beyond the K faces' weights: the flip rate's logit."""
        return 1 if self.flips else 0

    @property
    def hard(self) -> bool:
        return self.gate.name == "hard"

    @property
    def inside_code(self) -> int:
        """The outcome code (0 or 1) of the class inside the polyhedron."""
        return 1 if self.sign > 0 else 0

    def n_params(self, n_cols: int) -> int:
        return self.k * n_cols + self.n_extra

    def with_penalty(self, alpha: float) -> ModelSpec:
        return replace(self, alpha=float(alpha))

    def objective(self):
        """The per-row maths of this model (:mod:`plumestats._objectives`)."""
        return FlipObjective(self) if self.flips else PlumeObjective(self)


# The internal API between the model classes and plumestats' other modules:
# the only private names one module may use on another module's objects
# (tests/test_module_map.py holds every module to it). A variant overrides the
# hooks; the engine, the results and the exports read the state.
INTERNAL_API = frozenset(
    {
        # hooks of a model variant (label flips and hard gating set these)
        "_gate",
        "_flips",
        "_check_gamma",
        "_extra_names",
        "_extra_settings",
        "_report_extras",
        "_warn_fit_extras",
        "_results_class",
        "_results_wrapper",
        "_predict_settings",
        "_params_layout",
        "_flip_start",
        # model state and per-row maths the engine and the results read
        "_row_source",
        "_y_inside",
        "_weighted_rows",
        "_dask_moments",
        "_inside_code",
        "_check_params",
        "_user_rows",
        "_log_odds_and_jacobian",
        "_exog_named",  # exog came with column names: new rows match by name
        "_penalty_terms",  # a refit's formula terms (plumestats._penalty)
        "_without_data",  # why a model has no data (a JSON export says so)
        "_aliasing",  # the design's null directions, read by fit and inference
        # the results' diagnostics and the sandwiches' bread, set by the
        # results builder
        "_diagnostics",
        "_bread_held",
        "_identified_cov",  # a rank-deficient design's estimable variances
        "_bread",  # the inverse information, only held parameters NaN
    }
)
