"""Recall by meaning: the pinned sentence-embedding model (meaning/model) and the vectors' pure
kernels (meaning/vectors: the stored int8 form, the brute-force search). No SQL here: the vectors'
rows are read and written by store/vectors."""
