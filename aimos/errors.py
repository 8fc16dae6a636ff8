"""The one exception hierarchy of aimos: every error says what went wrong and what to do next.

Exit codes are not decided here; ``aimos.exit_codes.exit_code_for`` is the only mapping.
Messages must never carry secret material (keys, passphrases, the text of a refused secret).
"""

from __future__ import annotations

from aimos.vocabulary import CANONICAL_JSON_MAX_DEPTH


class AimosError(Exception):
    """Base of every error aimos raises on purpose. ``hint`` tells the user the fix."""

    default_hint = "See `aimos --help`."

    def __init__(self, message: str, hint: str | None = None, *, reason: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint
        # A machine-readable reason from a closed vocabulary, when the error has one.
        self.reason = reason

    def __str__(self) -> str:
        return self.message


# --- usage: the input was wrong (exit 2) -------------------------------------------------
class UsageError(AimosError):
    default_hint = "Check the command's arguments with `aimos COMMAND --help`."


class CanonicalJSONError(UsageError):
    default_hint = "Only JSON objects of finite numbers, safe integers and depth <= 32 can be signed."


class EncodingError(UsageError):
    default_hint = "Use canonical unpadded base64url or lowercase hex as the protocol requires."


class ValueTooLargeError(UsageError):
    default_hint = "Split the text into smaller memories (at most 1 MiB canonical each)."


class SecretDetectedError(UsageError):
    default_hint = (
        "Remove the secret from the text: aimos never stores credentials. "
        "Keep secrets in a password manager and save a note that points to it."
    )


class ImportFormatError(UsageError):
    """A file `aimos import` cannot read: its message names the file and line."""

    default_hint = "Fix the file at that line (or leave it out), then import again: nothing was saved."


class PassphraseSourceError(UsageError):
    default_hint = (
        "Give the master passphrase on a terminal prompt, with --passphrase-fd N, "
        "or in a 0600 file named by AIMOS_PASSPHRASE_FILE. Never on the command line."
    )


class ModelFormatError(UsageError):
    """A model folder a person gave is not one aimos can use (not ONNX, other inputs or outputs,
    no label order): nothing was enabled."""

    default_hint = (
        "Give a folder holding model.onnx (an NLI model exported to ONNX: inputs input_ids and "
        "attention_mask, output logits [batch, labels]), its tokenizer.json and its config.json "
        "(id2label naming entailment and contradiction); nothing was changed."
    )


# --- generic failure (exit 1) --------------------------------------------------------------
class StoreError(AimosError):
    default_hint = "Run `aimos status` to check the brain."


class SchemaTooNewError(StoreError):
    default_hint = "This brain was written by a newer aimos: upgrade aimos to open it."


class HomeNotWritableError(AimosError):
    default_hint = "Choose a writable AIMOS_HOME, or fix the folder's owner and permissions."


class ServiceError(AimosError):
    """The housekeeper service could not be registered, started or stopped."""


class HubUnreachableError(AimosError):
    """A sync hub could not be reached, or answered with an error: nothing was changed here."""

    default_hint = (
        "Check that the hub's PostgreSQL is running and the URL is right; this brain works offline "
        "and the next sync sends and fetches what waits."
    )


class OptionalDependencyError(AimosError):
    """A feature a person turned on needs a package of an optional extra that is not installed."""

    default_hint = "Install the extra the feature needs (pip install 'aimos[nli]' for the NLI judge)."


# --- not found (exit 3) ---------------------------------------------------------------------
class ModelUnavailableError(AimosError):
    """The embedding model cannot be used here (not installed, no build for the platform, a file
    that is not the pinned one, turned off): recall works on words alone."""

    default_hint = "Recall by meaning is off; recall by words works as before."


class NotFoundError(AimosError):
    default_hint = "Run `aimos list` to see what exists."


class NotInstalledError(NotFoundError):
    default_hint = "Run `aimos install` first (see README.md), or set AIMOS_HOME to the brain's home."


class MemoryNotFoundError(NotFoundError):
    default_hint = "Run `aimos list` to see memory ids."


class AgentNotFoundError(NotFoundError):
    default_hint = "Run `aimos agent list` to see enrolled agents, or `aimos agent enroll ID`."


class ReceiptNotFoundError(NotFoundError):
    default_hint = "Receipt ids are printed by `aimos recall`; `aimos receipt list` shows recent ones."


class ReceiptMissingError(NotFoundError):
    default_hint = "Feedback is about a memory a recall disclosed: recall it first (`aimos recall ...`)."


class OutcomeNotFoundError(NotFoundError):
    default_hint = "Give the outcome_id that `aimos feedback --json` printed."


class V2ReceiptUnavailableError(NotFoundError):
    default_hint = (
        "Only recalls made by this aimos version carry the signed V2 binding; run the recall again "
        "and export the new receipt."
    )


class V2OutcomeUnavailableError(NotFoundError):
    default_hint = (
        "Only outcomes recorded by this aimos version, about a recall that carries the signed V2 "
        "binding, can be exported; recall again, give feedback on the new recall and export that outcome."
    )


class ModelNotFoundError(NotFoundError):
    default_hint = (
        "Give the folder that holds the model's files: model.onnx, tokenizer.json and config.json "
        "(aimos never downloads a model); nothing was changed."
    )


# --- verification failed (exit 4) -----------------------------------------------------------
class VerificationError(AimosError):
    default_hint = "The data does not verify: do not trust it; run `aimos verify` for details."


class JSONDepthError(VerificationError, ValueError):
    """JSON text nested deeper than the canonical limit, refused before it is parsed
    (aimos/crypto/canonical.py).

    A ValueError, so a caller that maps malformed JSON to its own closed reason does the same for
    this; and a VerificationError (exit 4, reason ``canonical_json_depth_limit``) where nothing
    catches it: nothing aimos verifies may be nested deeper than it could have been signed."""

    default_hint = (
        "Signed aimos JSON is never nested deeper than 32 levels: this document or record was not "
        "made by aimos, or was damaged. Do not trust it."
    )

    def __init__(self, what: str = "JSON") -> None:
        super().__init__(
            f"{what} is nested deeper than {CANONICAL_JSON_MAX_DEPTH} levels (canonical_json_depth_limit)",
            reason="canonical_json_depth_limit",
        )


class ModelChangedError(VerificationError):
    """A pinned model file's bytes differ from those its SHA-256 pinned when it was enabled: aimos
    refuses to load it."""

    default_hint = (
        "If you replaced the model on purpose, enable it again to pin the new bytes "
        "(`aimos model nli DIR`); otherwise put the enabled file back, or turn the judge off "
        "(`aimos model nli --off`)."
    )


# --- integrity (exit 5) --------------------------------------------------------------------
class IntegrityError(AimosError):
    default_hint = (
        "The brain refused a change that would break its append-only record. "
        "Retained rows are never edited: save a correction with `aimos correct ID TEXT`."
    )


class DamagedBrainError(IntegrityError):
    """The brain file holds what aimos never writes (changed outside aimos, or damaged on disk):
    nothing is read from it as if it were sound, and nothing is changed."""

    default_hint = (
        "The brain file was changed outside aimos or is damaged; this command changed nothing. "
        "Restore the brain from a backup (the housekeeper keeps them in the backups folder of "
        "aimos's data folder), then run `aimos verify`."
    )

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        reason: str | None = None,
        where: tuple[str, ...] = (),
    ):
        super().__init__(message, hint, reason=reason)
        # the damaged places, when they are known (e.g. "memories.value (memory ID)")
        self.where = where


class DisclosureError(IntegrityError):
    """A memory a recall decides on (discloses, withholds or ranks) failed verification: the
    whole recall fails closed."""

    default_hint = (
        "The brain's record of this memory no longer verifies: it may have been edited outside "
        "aimos. Nothing was disclosed. Run `aimos verify` and restore the brain from a backup."
    )

    def __init__(self, memory_id: str, reason: str, *, column: str | None = None):
        where = f"; its {column} is not what binds it" if column else ""
        super().__init__(
            f"memory {memory_id} failed verification ({reason}{where}); nothing was disclosed", reason=reason
        )
        self.memory_id = memory_id
        self.column = column


class SealError(IntegrityError):
    """The brain's seal chain (aimos/store/seals.py) does not account for what the brain holds."""

    default_hint = (
        "Run `aimos verify` to see what differs; if the brain was put back from an older copy, "
        "`aimos restore BACKUP` is the way back, with a signed record."
    )


# --- identity or keychain (exit 6) ---------------------------------------------------------
class IdentityError(AimosError):
    default_hint = "Run `aimos agent list` to check the agent's epochs and grants."


class KeychainError(IdentityError):
    default_hint = (
        "No OS keychain answered. On a headless machine choose aimos's own file keystore with "
        "`aimos install --keystore file` (or `--keystore auto`); an installed brain moves its keys "
        "with `aimos keystore move --to file`."
    )


class NoKeychainError(KeychainError):
    """No OS keychain is here at all: keyring found none to use (a server, WSL, a container, no
    D-Bus session). Unlike a keychain that is there but fails, the file keystore may stand in."""


class KeychainLockedError(KeychainError):
    """The OS keychain answered, but its collection is locked and could not be unlocked."""

    default_hint = (
        "Unlock it and try again: log in to the desktop session (the login keychain unlocks with "
        "it), or unlock the 'Login' keyring in Seahorse (Passwords and Keys) or Keychain Access. "
        "Where no desktop runs, restart gnome-keyring unlocked: `gnome-keyring-daemon --replace "
        "--unlock --components=secrets` reads the keyring's password from stdin."
    )


class PassphraseError(IdentityError):
    default_hint = "Give the master passphrase chosen at install (at least 8 characters)."


class EpochRevokedError(IdentityError):
    default_hint = "This agent epoch was revoked: run `aimos agent rotate ID` to get a new one."


class EpochExpiredError(IdentityError):
    default_hint = "This agent epoch is outside its validity: run `aimos agent rotate ID`."


class ReplayError(IdentityError):
    default_hint = "Every request needs a fresh nonce: sign the request again."


class ClockSkewError(IdentityError):
    default_hint = "Request time is more than 300 s from the brain's clock: fix the clock and re-sign."


class GrantError(IdentityError):
    default_hint = (
        "The agent's master-signed grant does not allow this: lower the clearance or data class, "
        "or enrol the agent with a wider grant (`aimos agent enroll ID --clearance N`)."
    )


class SignatureError(IdentityError):
    default_hint = "The request's signature or certificate does not verify: re-sign with the enrolled key."


# --- busy (exit 7) -------------------------------------------------------------------------
class BusyError(AimosError):
    default_hint = "Another aimos process holds the brain for writing: try again in a moment."


# --- aborted (exit 8) ----------------------------------------------------------------------
class AbortedError(AimosError):
    default_hint = "Nothing was changed."


# --- warnings: the command goes on ---------------------------------------------------------
class ExpiryWarning(UserWarning):
    """An agent signing with an epoch that ends within EXPIRY_WARNING_DAYS (``warnings.warn``'d
    by actions.session). Each front end shows its one-line text its own way: the CLI on stderr,
    MCP in the tool result's text."""
