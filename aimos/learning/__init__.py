"""Outcomes, valence and authorized reweight transitions (MutMem sections 4-6)."""
