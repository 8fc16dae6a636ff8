"""Evaluations and benchmarks; always in scratch brains under a temporary home."""
