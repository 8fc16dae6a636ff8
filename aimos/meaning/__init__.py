"""Recall by meaning: the pinned sentence-embedding model (meaning/model) and the vectors' pure
kernels (meaning/vectors: the stored int8 form, the brute-force search). No SQL here: the vectors'
rows are read and written by store/vectors.

aimos runs numpy through this package (inside its functions; eval aside); its BLAS runs one thread
unless OPENBLAS_NUM_THREADS says otherwise: the search is a matrix-vector product bound by memory,
and OpenBLAS's start of a thread pool cost 50-70 ms of every cold command that imports numpy."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
