"""Write gates: refuse secrets (never echoing them) and detect canary markers.

Pure functions over text, no I/O. The shapes themselves are in secret_shapes; this module says
where a secret is and refuses it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from aimos.errors import SecretDetectedError
from aimos.memory.secret_forms import Form, joined, normalised, wrapped
from aimos.memory.secret_shapes import Finding, findings_in

__all__ = [
    "Finding",
    "find_secret",
    "refuse_secret_fields",
    "refuse_secrets",
    "scan_secrets",
    "secret_kind",
    "secret_words",
    "where",
]


def _mapped(form: Form, found: Iterable[Finding], note: str) -> list[Finding]:
    out = []
    for f in found:
        start, end = form.span(f.start, f.end)
        out.append(Finding(f"{f.kind}, {note}", start, end))
    return out


# Short texts lately scanned and found clean (bounded): a save's key, scope, type and source are
# mostly the same few words every time, and the scan is a pure function of the text. A text with a
# finding is never kept.
_CLEAN: OrderedDict[str, None] = OrderedDict()
CLEAN_KEPT = 256
CLEAN_LONGEST = 200


def scan_secrets(text: str) -> list[Finding]:
    """The secret shapes in ``text``, earliest first, with spans in ``text`` as given. The text
    is looked at as given; then normalised (NFKC, invisible characters dropped, %XX decoded);
    then with its lines joined; then each base64 or hex run that decodes to text is decoded and
    looked at once (as given, normalised and joined; no second decoding). The first of these
    forms that shows a secret answers."""
    if not text or text in _CLEAN:
        return []
    found = _scan(text)
    if not found and len(text) <= CLEAN_LONGEST:
        _CLEAN[text] = None
        if len(_CLEAN) > CLEAN_KEPT:
            _CLEAN.popitem(last=False)
    return found


def _scan(text: str) -> list[Finding]:
    found = list(findings_in(text))
    if not found:
        norm = normalised(text)
        if norm.text != text:
            found = _mapped(
                norm, findings_in(norm.text), "hidden by look-alike, invisible or %-encoded characters"
            )
        if not found:
            lines = joined(norm)
            if lines.text != norm.text:
                found = _mapped(lines, findings_in(lines.text), "split across lines")
        if not found:
            for how, decoded, start, end in wrapped(norm):
                inner = normalised(decoded)
                for form in (decoded, inner.text, joined(inner).text):
                    first = next(findings_in(form), None)
                    if first is not None:
                        span = norm.span(start, end)
                        found.append(Finding(f"{first.kind}, {how}", span[0], span[1]))
                        break
    # at one place, our own words before a library plugin's, and the longest span of a kind first
    return sorted(set(found), key=lambda f: (f.start, "detect-secrets" in f.kind, f.kind, -f.end))


def find_secret(text: str) -> Finding | None:
    """The first secret shape in ``text``, or None."""
    found = scan_secrets(text)
    return found[0] if found else None


def secret_kind(text: str) -> str | None:
    """The kind of the first secret in ``text``, or None: a front end asks before it echoes text
    it was given (a usage error quoting an argument, a schema error quoting a tool argument)."""
    found = find_secret(text)
    return found.kind if found else None


# what a front end says instead of an error that would quote a secret it was given
NOT_ECHOED = "the input holds what looks like a secret ({kind}); it is not shown here"
NOT_ECHOED_HINT = (
    "aimos never takes a secret: keep it in a password manager and give aimos a note that points to it."
)


def where(text: str, at: int) -> tuple[int, int]:
    """(line, character) of index ``at`` in ``text``, both from 1."""
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def secret_words(field: str, text: str, finding: Finding) -> str:
    """Where a secret is and what kind, never the secret nor a piece of it."""
    line, char = where(text, finding.start)
    return f"the {field} holds what looks like a secret ({finding.kind}) at line {line}, character {char}"


def refuse_secret_fields(fields: Mapping[str, object], *, outcome: str = "nothing was saved") -> None:
    """A SecretDetectedError naming the field, the kind and the place of the first secret found
    in the string values of ``fields`` (in their order); nothing otherwise."""
    for field, value in fields.items():
        if isinstance(value, str) and value:
            finding = find_secret(value)
            if finding is not None:
                raise SecretDetectedError(
                    f"refused: {secret_words(field, value, finding)}; {outcome}", reason="secret_detected"
                )


def refuse_secrets(*texts: str | None) -> None:
    """refuse_secret_fields over texts with no field names ("text", "text 2", ...)."""
    refuse_secret_fields({("text" if i == 0 else f"text {i + 1}"): t for i, t in enumerate(texts)})


CANARY_PATTERN = re.compile(r"\bSECRET-[A-F0-9]{8}(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class CanaryScan:
    detected: bool
    count: int


def scan_canary(*texts: str | None) -> CanaryScan:
    count = sum(len(CANARY_PATTERN.findall(t)) for t in texts if t)
    return CanaryScan(count > 0, count)
