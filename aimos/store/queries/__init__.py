"""The SQL of aimos's domain packages, one module per package that asks: each function runs its
statements on a connection it is given and returns typed rows (TypedDicts: the keys are the
columns). Only the store holds SQL text and imports apsw (tests/architecture/test_store_boundary.py)."""
