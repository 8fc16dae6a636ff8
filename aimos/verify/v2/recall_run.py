"""One V2 recall verification run: the check being evaluated (a kit :class:`Cursor`) and the values
earlier checks established, which later checks bind to."""

from __future__ import annotations

from typing import Any

from aimos.verify.kit import Cursor, is_hex64, parse_time
from aimos.verify.v2.recall_profile import ENVELOPE_COMMITMENT_INVALID


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
