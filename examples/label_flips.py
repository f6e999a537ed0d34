"""Noisy labels: PLUME against PLUME with label flips on a simulated polygon.

Run with ``python examples/label_flips.py``. No download needed: 12,000 points
around a polygon with three faces, 10% of the labels flipped at random; the
first 2,000 train, the rest test. PLUME's faces move off the polygon to
explain the wrong labels (here inwards); ``ps.plume_flip`` estimates the flip
rate with the faces, keeps them on the polygon and classifies new points
better.
"""

from __future__ import annotations

import numpy as np

import plumestats.api as ps


def unit_offsets(hyperplanes) -> np.ndarray:
    """Each face's intercept once its normal is scaled to unit length."""
    weights = np.asarray(hyperplanes)
    return np.sort(weights[:, 0] / np.linalg.norm(weights[:, 1:], axis=1))


def main(seed: int = 4, noise: float = 0.10) -> None:
    data, truth = ps.simulate_polyhedron(
        12000, d=2, k=3, noise=noise, random_state=seed
    )
    train, test = data.iloc[:2000], data.iloc[2000:]
    plain = ps.plume("y ~ x1 + x2", train, k=3).fit(alpha=1e-6)
    flips = ps.plume_flip("y ~ x1 + x2", train, k=3).fit(alpha=1e-6)
    print(flips.summary())

    low, high = flips.flip_rate_conf_int()
    print(
        f"\nflip rate: {flips.flip_rate:.3f} (95% CI {low:.3f} to {high:.3f}); "
        f"simulated: {noise:.3f}"
    )
    lr = 2 * (flips.llf - plain.llf)
    print(f"LR test of no flips: {lr:.1f} (boundary null: half the chi2(1) tail)")
    print("\nface offsets at unit normals (positive: the polygon is larger)")
    print(f"  truth       {np.round(unit_offsets(truth), 3)}")
    print(f"  PLUME       {np.round(unit_offsets(plain.hyperplanes), 3)}")
    print(f"  label flips {np.round(unit_offsets(flips.hyperplanes), 3)}")
    x_test = np.column_stack([np.ones(len(test)), test[["x1", "x2"]]])
    inside = (x_test @ np.asarray(truth).T).min(axis=1) >= 0
    print("\ntest accuracy on the noisy labels")
    print(f"  true polygon {np.mean(inside == test['y']):.4f}")
    for name, res in (("PLUME", plain), ("label flips", flips)):
        print(f"  {name:<12} {np.mean((res.predict(test) > 0.5) == test['y']):.4f}")


if __name__ == "__main__":
    main()
