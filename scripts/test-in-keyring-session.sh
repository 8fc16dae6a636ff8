#!/usr/bin/env bash
# Runs inside `dbus-run-session`: start and unlock a throwaway gnome-keyring (Secret Service)
# so the keychain tests hit a real one, then run pytest.
set -euo pipefail
eval "$(printf pass | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
python -c "import keyring; keyring.set_password('aimos:ci-probe', 'probe', 'ok'); \
assert keyring.get_password('aimos:ci-probe', 'probe') == 'ok'; \
keyring.delete_password('aimos:ci-probe', 'probe'); print('secret service:', type(keyring.get_keyring()).__name__)"
exec python -m pytest -q "$@"
