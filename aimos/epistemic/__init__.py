"""Epistemic labels: the classifier kernel (pure) and the signed, chained classification record."""
