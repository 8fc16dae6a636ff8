"""The CLI tests use `aimos_home`, `passphrase`, `installed` and `brain_template` from
tests/conftest.py, and the subprocess helpers in `aimos_cli_support` beside this file."""
