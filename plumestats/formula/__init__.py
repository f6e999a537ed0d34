"""Formula interface (patsy), in the style of ``statsmodels.formula``."""
