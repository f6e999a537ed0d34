"""One fitting problem: a model's spec and objective on a row source.

:class:`Problem` answers every question the EM engine (``plumestats._em``), the
starts, the re-seating moves and the results ask of the data, whatever holds
the rows (``plumestats._rows``): the objective and the surrogate ``Q``, the
gradient, the Hessians of ``L`` and ``Q``, the movement of the scores, the
perfectly fitted rows, the separation check's Grams, and at the end the
:class:`DataSums` the results need. A point's answers are sums over the rows,
kept on a :class:`Point` so that no question is computed twice.

A pass computes what the engine will ask for next as well: the gradient with
the Hessian it will be asked for (the one requested last, or the one
:meth:`Problem.prefetch_hessian` names) and, at a line-search trial, ``L``
and the movement of the scores with ``Q``. On a single in-memory block the
point also keeps its per-row state (slab by slab on a large design), and a
pass costs its arithmetic and a few microseconds. On blocks (``chunksize``,
Dask) each pass reads the data, so it also brings the derivatives at every
line-search trial, which becomes the next iterate when it is accepted: an
iteration costs about one pass per trial.
Memory beyond the data is then ``O(slab * (p + K^2) + (K p)^2)`` for the
iterations by blocks (a Dask partition is one slab), and ``O(block * p)``
for the pass that chooses the standardisation.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ._objectives import combine_sums
from ._penalty import Ridge

__all__ = ["DataSums", "Point", "Problem", "block_permutation", "user_jacobian"]


class Point:
    """The sums at one parameter vector, filled in as the engine asks for
    them (and, on a single in-memory block, the per-row state)."""

    def __init__(self, params: np.ndarray):
        self.params = params
        self.sums: dict = {}
        self.surrogates: dict = {}
        # the point the score movement ("moved") was measured from, by a weak
        # reference: a strong one would chain every iterate of a run, rows
        # and Hessians, to the last (pima: a third slower from the memory)
        self.anchor: weakref.ref | None = None
        self.rows = None  # on an in-memory design: the state of each slab


class Problem:
    """A model's maximisation problem on a row source.

    Parameters
    ----------
    source : InMemoryRows or DaskRows
        Where the (standardised) rows are.
    spec : ModelSpec
        K, the gate, the inside class and the objective.
    ridge : Ridge or ndarray, optional
        The L2 penalty :math:`\tfrac12 b' R b` (a vector: its diagonal, one
        weight per internal parameter): the objective is
        ``sum_n l_n - 0.5 * params' R params``.
    metrics : TermMetrics, optional
        The design's terms' penalty metric (which the starts' ridge fits and
        distances use) and damping metric (:func:`plumestats._penalty.term_metrics`);
        by default none: no starts, and Newton steps damped by the identity.

    Attributes
    ----------
    passes : int
        Passes over the data so far (one map-reduce each, on blocks).
    """

    def __init__(self, source, spec, ridge=None, metrics=None):
        self.source = source
        self.spec = spec
        self.objective = spec.objective()
        self.k = spec.k
        self.gate = spec.gate
        n_params = spec.n_params(source.n_cols)
        self.ridge = Ridge.of(np.zeros(n_params) if ridge is None else ridge)
        self.metrics = metrics
        # the damping of the Newton steps in every parameter (None: identity)
        self.damping = (
            None if metrics is None else metrics.tiled_damping(self.k, spec.n_extra)
        )
        self.passes = 0
        self._anchor: Point | None = None
        # a run ended and the next has not asked for a gradient yet
        self._between_runs = False
        # the Hessian fetched with the next gradient (blocks): EM starts with Q's
        self._next_hessian = "qhess"

    @property
    def nobs(self) -> int:
        return self.source.nobs

    @property
    def n_cols(self) -> int:
        return self.source.n_cols

    @property
    def n_weights(self) -> int:
        """Parameters of the faces, ``K p`` (the extras come after)."""
        return self.k * self.n_cols

    def damping_of(self, leading: slice):
        """The Newton damping's metric of a leading slice of the parameters
        (the free ones, or the faces' weights), or ``None`` (the identity)."""
        return None if self.damping is None else self.damping.leading(leading)

    def prefetch_hessian(self, key: str | None) -> None:
        """What a pass computes with the next gradient: the Hessian ``key``
        names (``"qhess"`` or ``"hess"``); none (``None``:
        the M-steps without one, which start from ``Q``); or, with
        ``"end"``, none and no ``Q`` either (the next accepted trial ends the
        run, and only its gradient is read)."""
        self._next_hessian = key

    def end_run(self) -> None:
        """Free the last run's iterate (its rows), so that they are not held
        while another problem on the same source runs (the penalty-path
        move's). On blocks the next run's first pass still brings the
        derivatives its first iteration reads, as a line-search trial's
        does, but measures no move from the freed point."""
        self._anchor = None
        self._between_runs = True

    # ------------------------------------------------------------ the passes
    def rows(self, params: np.ndarray):
        """The per-row state at ``params`` on the whole design (a source of
        one slab, such as the sample of the starts and re-seating moves)."""
        source = self.source
        return self.objective.rows(source.design, source.y_pm, params)

    def _pass(self, point: Point, need, base=None, anchor=None, direction=None):
        self.passes += 1
        if self.source.single:
            return self._single(point, need, base, anchor, direction)
        arguments = {}
        if base is not None:
            arguments["base"] = base.params
        if anchor is not None:
            arguments["anchor"] = anchor.params
        if direction is not None:
            arguments["direction"] = direction
        return self.source.reduce(
            objective=self.objective,
            params=point.params,
            need=frozenset(need),
            **arguments,
        )

    def _single(self, point: Point, need, base, anchor, direction) -> dict:
        """The sums over the in-memory design's slabs (one, unless the design
        is large), from the per-row state each point keeps slab by slab."""
        need = frozenset(need)
        total = None
        for index, (design, _, weights) in enumerate(self.source.slabs()):
            sums = self.objective.sums(
                design,
                self._slab_state(point, index),
                need,
                base=None if base is None else self._slab_state(base, index),
                anchor_scores=(
                    None if anchor is None else self._slab_state(anchor, index).scores
                ),
                direction=direction,
                weights=weights,
            )
            total = sums if total is None else combine_sums(total, sums)
        return total

    def _slab_state(self, point: Point, index: int):
        """The per-row state of slab ``index`` at ``point``, computed once."""
        if point.rows is None:
            point.rows = [None] * len(self.source.slabs())
        if point.rows[index] is None:
            design, y, _ = self.source.slabs()[index]
            point.rows[index] = self.objective.rows(design, y, point.params)
        return point.rows[index]

    def _fill(self, point: Point, need: set, base: Point | None = None) -> None:
        """One pass for what ``point`` lacks of ``need``, plus what the engine
        will ask next: at a line-search trial ``L`` and the score movement from
        the iterate; on blocks ``L`` always and, at a trial, the next
        iteration's derivatives (:meth:`_derivatives`)."""
        need = set(need)
        anchor = None
        trial = (
            self._anchor is not None
            and point.anchor is None
            and self._anchor is not point
        )
        if self.source.single:
            if trial and self._trial_is_next():
                # an accepted trial's L and score movement are read next: in
                # memory a pass is cheap, but each has its fixed cost (pima:
                # two passes an EM iteration with the gradient's, six before)
                need |= {"L", "moved"}
                anchor = self._anchor
        else:
            # a pass is dear: it always brings L and the perfectly fitted rows
            need |= {"L", "n_perfect"}
            if trial:
                # a line-search trial: most are accepted, and the next
                # iteration then starts with the derivatives at this point
                need |= {"moved", *self._trial_derivatives()}
                anchor = self._anchor
            elif self._between_runs and point.anchor is None:
                # the start of a later run: its first iteration reads them
                need |= self._trial_derivatives()
        need -= set(point.sums)
        if not need:
            return
        sums = self._pass(point, need, base=base, anchor=anchor)
        if "Q" in sums:
            point.surrogates[id(base.params)] = (base.params, float(sums.pop("Q")))
        if "moved" in sums:
            point.anchor = weakref.ref(anchor)
        point.sums.update(sums)

    # ------------------------------------------------ what the engine asks
    def terms(self, params: np.ndarray) -> Point:
        return Point(np.asarray(params, dtype=float))

    def penalty(self, params: np.ndarray) -> float:
        """The L2 penalty of ``params`` (the faces' weights, or all of them)."""
        return self.ridge.value(params)

    def objective_value(self, params: np.ndarray, point: Point) -> float:
        """``L - penalty`` at ``params`` (whose sums ``point`` holds)."""
        self._fill(point, {"L"})
        return float(point.sums["L"]) - self.penalty(params)

    def evaluate_objective(self, trial: np.ndarray) -> tuple[float, Point]:
        point = self.terms(trial)
        return self.objective_value(trial, point), point

    def surrogate(self, params: np.ndarray, point: Point, base: Point) -> float:
        """The EM surrogate ``Q`` at ``point`` with the responsibilities (and,
        with label flips, the clean-label weights) at ``base``, less the
        penalty of ``params``."""
        if base is point:
            self._fill(point, {"Qself"})
            return float(point.sums["Qself"]) - self.penalty(params)
        known = point.surrogates.get(id(base.params))
        if known is None or known[0] is not base.params:
            self._fill(point, {"Q"}, base=base)
            known = point.surrogates[id(base.params)]
        return known[1] - self.penalty(params)

    def gradient(self, params: np.ndarray, point: Point) -> np.ndarray:
        """The gradient of ``L - penalty``. The engine asks for it first at each
        new iterate: the trials measure how far they move the scores from here."""
        self._anchor = point
        self._between_runs = False
        # with what the iteration reads next (the Hessian the engine asked
        # for last, Q at the point): one pass, in memory as on blocks
        self._fill(point, self._derivatives())
        return point.sums["grad"] - self.ridge.times(params)

    def _trial_is_next(self) -> bool:
        """Whether an accepted trial is the next iterate: not for an EM step
        with label flips, whose next iterate also moves the flip rate (what a
        pass brings at its trials would go unused)."""
        return not (self.spec.flips and self._next_hessian not in ("hess", "end"))

    def _trial_derivatives(self) -> set:
        """:meth:`_derivatives` where an accepted trial is the next iterate."""
        return self._derivatives() if self._trial_is_next() else set()

    def _derivatives(self) -> set:
        """What a pass computes for the next iteration: the
        gradient, the Hessian the engine asked for last, and for an EM step
        ``Q`` at the point's own responsibilities (where its search starts)."""
        key = self._next_hessian
        need = {"grad"} | ({key} & {"hess", "qhess"})
        if key in ("qhess", None):
            need.add("Qself")
        return need

    def _negated(self, point: Point, key: str) -> np.ndarray:
        self._next_hessian = key
        self._fill(point, {key})
        return self.ridge.add_to(-point.sums[key])

    def neg_hessian(self, point: Point) -> np.ndarray:
        """Minus the Hessian of the penalised log-likelihood."""
        return self._negated(point, "hess")

    def neg_q_hessian(self, point: Point, base: Point | None = None) -> np.ndarray:
        """Minus the Hessian of Q in the faces' weights, at the point's own
        responsibilities."""
        if base is not None and base is not point:
            raise NotImplementedError("Q's Hessian at other responsibilities")
        return self._negated(point, "qhess")

    def noise_share(self, point: Point) -> float:
        """Mean posterior probability that a label is a coin toss (flips)."""
        self._fill(point, {"noise"})
        return float(point.sums["noise"]) / self.source.weight_sum

    def score_change(self, old: Point, new: Point) -> float:
        """Largest change of a fitted score between two points."""
        if new.anchor is None or new.anchor() is not old:
            sums = self._pass(new, {"moved"}, anchor=old)
            return float(sums["moved"])
        return float(new.sums["moved"])

    def count_perfect(self, point: Point) -> int:
        """Rows fitted with probability above ``1 - 1e-8``."""
        self._fill(point, {"n_perfect"})
        return int(point.sums["n_perfect"])

    def responsible_grams(self, point: Point) -> tuple[np.ndarray, np.ndarray]:
        """Block-diagonal ``sum_n r_nk z_n z_n'`` over all rows and over the
        perfectly fitted ones (see :func:`plumestats._em.separating`). By
        blocks the same pass brings the Hessian, which the check reads next:
        the run's last step did not (``_Run.newton_step``)."""
        self._fill(point, {"resp_gram"} | (set() if self.source.single else {"hess"}))
        return (
            _block_diagonal(point.sums["resp_gram"]),
            _block_diagonal(point.sums["resp_gram_perfect"]),
        )

    def max_abs_move(self, direction: np.ndarray) -> float:
        """``max_n,k |z_n' d_k|`` for a direction of the faces' weights."""
        if self.source.single:
            weights = direction[: self.n_weights].reshape(self.k, -1).T
            return max(
                float(np.max(np.abs(design @ weights), initial=0.0))
                for design, _, _ in self.source.slabs()
            )
        point = self.terms(np.zeros(self.ridge.size))
        sums = self._pass(point, {"max_abs_move"}, direction=direction)
        return float(sums["max_abs_move"])

    def gate_share(self, params: np.ndarray) -> np.ndarray:
        """Mean gate probability of each face over the rows."""
        point = self.terms(params)
        self._fill(point, {"gate"})
        return point.sums["gate"] / self.source.weight_sum

    # ----------------------------------------------- what the results need
    def data_sums(self, point: Point, scaling, *, meat: bool, gram: bool) -> DataSums:
        """What the results need from the data at the estimates, in one pass
        that also gives the gradient and the Hessian there (which
        :meth:`gradient` and :meth:`neg_hessian` then reuse).

        The sums are in the engine's standardised coordinates and mapped to the
        user's exactly: the user scores are ``J' s_n`` with ``J = I_K (x) B``
        (``B`` the per-face map of :class:`~plumestats._scaling.DesignScaling`,
        the extras unchanged), so ``sum_n s_n s_n' = J' (sum_n s^z_n s^z_n')
        J``. The faces' scores ``a_nk = w_k' x_n = b_k' z_n`` need no map.
        """
        self._next_hessian = "hess"
        need = {"grad", "hess", "L", "n_perfect", "gate", "confusion"}
        need |= {"gram"} if gram else set()
        need |= {"meat"} if meat else set()
        self._fill(point, need)
        sums = point.sums
        jacobian = user_jacobian(scaling, self.k, self.objective.n_extra, internal=True)
        return DataSums(
            llf=float(sums["L"]),
            n_perfect=int(sums["n_perfect"]),
            gate_mass=np.asarray(sums["gate"], dtype=float),
            radius=float(self.source.radius),
            confusion=np.asarray(sums["confusion"]),
            # the faces' scores' Gram from the engine's rows and weights: in
            # the user's units X'X cancels where a column's mean is 1e9 sds
            score_gram=_score_gram(point.params, sums, self.k) if gram else None,
            # the root in the engine's coordinates, where the scores are of
            # one scale, then mapped: a root of the user's meat loses the small
            # directions of a design in mixed units (x1 * 1e4 beside x2 * 1e-4)
            meat_root=_root_of(sums["meat"]) @ jacobian if meat else None,
        )


def user_jacobian(scaling, k: int, n_extra: int, internal: bool = False):
    """``d user / d internal`` for the whole parameter vector (``internal``:
    ``d internal / d user``), ``I_K (x) B`` and the identity for the extras."""
    block = scaling.jacobian_to_internal() if internal else scaling.jacobian_to_user()
    size = k * block.shape[0]
    jacobian = np.eye(size + n_extra)
    jacobian[:size, :size] = np.kron(np.eye(k), block)
    return jacobian


def block_permutation(order: np.ndarray, n_cols: int, n_extra: int) -> np.ndarray:
    """The parameter indices that put the faces in ``order`` (extras last)."""
    faces = (order[:, None] * n_cols + np.arange(n_cols)).ravel()
    return np.concatenate([faces, faces.size + np.arange(n_extra)]).astype(int)


@dataclass(frozen=True)
class DataSums:
    """What the results need from the data, summed over the rows at the
    estimates, in the user's units (see :meth:`Problem.data_sums`).

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
    confusion : ndarray, shape (2, 2)
        Observed 0/1 against predicted at 0.5 (``pred_table()``).
    score_gram : ndarray, shape (K, K), or None
        :math:`\\sum_n a_{nk} a_{nj}`, the Gram of the faces' scores
        :math:`a_{nk} = w_k' x_n` (when the collapsed-expert check needs it).
    meat_root : ndarray, or None
        A square ``R`` with ``R'R`` :math:`= \\sum_n s_n s_n'` of the
        observation scores (robust covariances): it stands for the scores,
        which a sandwich needs only through ``S'S``.
    """

    llf: float
    n_perfect: int
    gate_mass: np.ndarray
    radius: float
    confusion: np.ndarray
    score_gram: np.ndarray | None = None
    meat_root: np.ndarray | None = None


def _score_gram(params: np.ndarray, sums: dict, k: int) -> np.ndarray:
    """``B Z'Z B'`` for the faces' weights ``B`` in the engine's coordinates."""
    faces = params[: k * sums["gram"].shape[0]].reshape(k, -1)
    return faces @ sums["gram"] @ faces.T


def _root_of(meat: np.ndarray) -> np.ndarray:
    """A square matrix ``R`` with ``R'R = meat`` (NaN where the scores
    overflowed, as in memory)."""
    if not np.all(np.isfinite(meat)):
        return np.full_like(meat, np.nan)
    eigenvalues, vectors = np.linalg.eigh(0.5 * (meat + meat.T))
    # rounding can leave a zero eigenvalue of the semi-definite meat at -1e-17
    return (vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))).T


def _block_diagonal(blocks: np.ndarray) -> np.ndarray:
    k, p, _ = blocks.shape
    out = np.zeros((k * p, k * p))
    for j in range(k):  # K is small: a loop over faces only
        out[j * p : (j + 1) * p, j * p : (j + 1) * p] = blocks[j]
    return out
