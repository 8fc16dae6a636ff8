"""Attacks by someone holding the brain file (or handing aimos a file): each test makes the attack
with the real `sqlite3` shell or a crafted file, runs the real `aimos` CLI in a subprocess, and
checks the refusal: its exit code, its closed reason, and that nothing was disclosed or changed.

`aimos_home`, `passphrase`, `installed` and `brain_template` come from tests/conftest.py; the
subprocess helpers from tests/cli/aimos_cli_support.py."""
