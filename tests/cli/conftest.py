"""The CLI tests use `aimos_home`, `passphrase`, `installed` and `brain_template` from
tests/conftest.py, and the subprocess helpers in `support.cli` beside this file."""
