"""One V2 recall verification run: the check being evaluated (a kit :class:`Cursor`) and the values
earlier checks established, which later checks bind to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aimos.verify.kit import Cursor, is_hex64, is_text, parse_time, sha256_hex
from aimos.verify.v2.recall_profile import ENVELOPE_COMMITMENT_INVALID, singleton_where

# (reason, singleton kind, field, expected value, detail)
Binding = tuple[str, str, str, object, str]


class RecallRun(Cursor):
    """``reason`` / ``where`` name the check being evaluated, so an unexpected exception can be
    reported as that check's failure."""

    def __init__(self) -> None:
        super().__init__(ENVELOPE_COMMITMENT_INVALID)
        self.signatures = 0
        self.bundle: dict[str, Any] = {}
        self.company = ""
        self.fingerprint = ""
        self.count = 0
        self.singletons: dict[str, dict[str, Any]] = {}  # kind -> body
        self.results: list[dict[str, dict[str, Any]]] = []  # result -> kind -> object
        # values established by earlier checks
        self.agent_id = ""
        self.valid_from = ""
        self.cert_fingerprint = ""
        self.hk_valid_from = ""
        self.hk_fingerprint = ""
        self.request_ts = 0
        self.request_hash = ""
        self.epistemic_hash = ""
        self.security_hash = ""
        self.evidence: list[Any] = []
        self.commitments: list[bytes] = []

    def iso(self, value: object, what: str, reason: str | None = None) -> str:
        """A canonical ISO time (returned unchanged), or a failure with ``reason``."""
        if isinstance(value, str) and parse_time(value) is not None:
            return value
        self.fail(f"{what} is not a canonical ISO time (YYYY-MM-DDTHH:MM:SS.mmmZ)", reason)

    def hex64(self, value: object, what: str, reason: str | None = None) -> str:
        if is_hex64(value):
            return value
        self.fail(f"{what} is not a lowercase 64-hex hash", reason)

    def body(self, kind: str) -> dict[str, Any]:
        return self.singletons[kind]

    def bodies(self, kinds: str) -> list[dict[str, Any]]:
        """The singletons of the space-separated ``kinds``, in that order."""
        return [self.singletons[kind] for kind in kinds.split()]

    def bind(self, bindings: Iterable[Binding]) -> None:
        """Each singleton's field equals the value an earlier check established, in order; each
        row is its own check (its reason, at its object)."""
        for reason, kind, field, expected, detail in bindings:
            self.at(reason, singleton_where(kind))
            self.need(self.body(kind).get(field) == expected, detail)

    def certificate_binds(self, epoch: dict[str, Any], fingerprint: str, who: str) -> str:
        """The epoch's certificate and key are strings and H(certificate) is its fingerprint."""
        certificate = epoch.get("certificate")
        self.need(
            is_text(certificate) and is_text(epoch.get("public_key_b64u")),
            f"{who} certificate and public key must be non-empty strings",
        )
        assert isinstance(certificate, str)
        self.need(
            sha256_hex(certificate) == fingerprint, f"H({who} certificate) differs from cert_fingerprint"
        )
        return certificate
