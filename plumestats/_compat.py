"""Imports whose location differs between statsmodels releases."""

try:  # statsmodels >= 0.15
    from statsmodels.tools._decorators import cache_readonly
except ImportError:  # pragma: no cover - statsmodels 0.14
    from statsmodels.tools.decorators import cache_readonly

__all__ = ["cache_readonly"]
