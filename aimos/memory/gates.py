"""Write gates: refuse secrets (never echoing them) and detect canary markers.

Pure functions over text, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aimos.errors import SecretDetectedError

_START = r"(?<![A-Za-z0-9])"  # not inside a longer token (an underscore before still counts)
_END = r"(?![A-Za-z0-9])"

# (name shown to the user, pattern). Names describe the shape, never the matched text.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("AWS access key id", re.compile(_START + r"(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}" + _END)),
    ("GitHub token", re.compile(_START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("Anthropic API key", re.compile(_START + r"sk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI-style API key", re.compile(_START + r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(_START + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(_START + r"AIza[0-9A-Za-z_-]{35}")),
    ("Stripe secret key", re.compile(_START + r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("JSON Web Token", re.compile(_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    (
        "credential assignment (api_key/secret/token/password = long value)",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token"
            r"|password|passwd)\b\s*[:=]\s*['\"]?[A-Za-z0-9_\-+/=.]{16,}"
        ),
    ),
)

CANARY_PATTERN = re.compile(r"\bSECRET-[A-F0-9]{8}(?![A-Za-z0-9_])")


def find_secret(text: str) -> str | None:
    """The name of the first secret shape found in ``text``, or None."""
    for name, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return name
    return None


def refuse_secrets(*texts: str | None) -> None:
    for text in texts:
        if text:
            name = find_secret(text)
            if name:
                raise SecretDetectedError(
                    f"refused: the text contains what looks like a secret ({name}); nothing was saved",
                    reason="secret_detected",
                )


@dataclass(frozen=True)
class CanaryScan:
    detected: bool
    count: int


def scan_canary(*texts: str | None) -> CanaryScan:
    count = sum(len(CANARY_PATTERN.findall(t)) for t in texts if t)
    return CanaryScan(count > 0, count)
