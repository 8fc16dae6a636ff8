#!/usr/bin/env bash
# Runs inside `dbus-run-session`: start and unlock a throwaway gnome-keyring (Secret Service)
# so the keychain tests hit a real one, then run pytest on AIMOS_TEST_WORKERS pytest-xdist workers
# (default 2, one a core; 0 runs in this process alone). Each worker starts a Secret Service of its
# own (tests/conftest.py, AIMOS_TESTS_WORKER_KEYRING), so no test's keychain is another's.
set -euo pipefail
# a keyring folder of this session's own: two sessions on one machine never share login.keyring
XDG_DATA_HOME="$(mktemp -d)"
export XDG_DATA_HOME
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
eval "$(printf pass | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
python -c "import keyring; keyring.set_password('aimos:ci-probe', 'probe', 'ok'); \
assert keyring.get_password('aimos:ci-probe', 'probe') == 'ok'; \
keyring.delete_password('aimos:ci-probe', 'probe'); print('secret service:', type(keyring.get_keyring()).__name__)"
workers="${AIMOS_TEST_WORKERS:-2}"
if [ "$workers" = "0" ]; then
  python -m pytest -q "$@"
else
  export AIMOS_TESTS_WORKER_KEYRING=1
  python -m pytest -q -n "$workers" --dist load "$@"
fi
