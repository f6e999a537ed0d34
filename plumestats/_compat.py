"""Imports whose location differs between statsmodels releases."""

try:  # statsmodels >= 0.15
    from statsmodels.tools._decorators import cache_readonly
except ImportError:  # pragma: no cover - statsmodels 0.14
    from statsmodels.tools.decorators import cache_readonly

from statsmodels import __version__ as _sm_version

# statsmodels >= 0.15 reads formulas through its FormulaManager, which takes a
# dict as eval_env; 0.14 hands eval_env to patsy, which takes an int or an
# EvalEnvironment only
STATSMODELS_EVAL_ENV_MAPPING = tuple(int(p) for p in _sm_version.split(".")[:2]) >= (
    0,
    15,
)

__all__ = ["STATSMODELS_EVAL_ENV_MAPPING", "cache_readonly"]
