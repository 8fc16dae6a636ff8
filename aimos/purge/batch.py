"""Scratch (evaluation) brains: purged with one confirmation for the batch, never the canonical
brain. The confirmation names the count and a hash of the brains' names:
`PURGE AIMOS <company> <N> SCRATCH BRAINS <sha256>` with the sha256 of canonical JSON
{domain: PURGE_BATCH_SCHEMA, company, brains: [sorted names]}."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from aimos.crypto.canonical import canonical_sha256_hex
from aimos.errors import AbortedError, UsageError
from aimos.paths import using_home
from aimos.vocabulary import PURGE_BATCH_SCHEMA as DOMAIN

SCRATCH_PREFIX = "eval-"


def batch_confirmation(company: str, names: Sequence[str]) -> str:
    digest = canonical_sha256_hex({"domain": DOMAIN, "company": company, "brains": sorted(names)})
    return f"PURGE AIMOS {company} {len(names)} SCRATCH BRAINS {digest}"


def purge_scratch_batch(
    targets: Sequence[tuple[Path, str]], confirmation: str, receipts_dir: Path
) -> list[str]:
    """Purge each scratch brain (home, passphrase) with its own signed receipt in ``receipts_dir``,
    after the one confirmation for the whole batch. A non-scratch brain refuses the batch."""
    from aimos.purge import ceremony

    names, companies = [], set()
    for home, _ in targets:
        with using_home(home):
            inv = ceremony.inventory()
        if not inv.brain_name.startswith(SCRATCH_PREFIX):
            raise UsageError(
                f"{home} holds the brain {inv.brain_name!r}, not a scratch brain",
                "A batch purges evaluation brains (eval-*) only; the canonical brain needs its own ceremony.",
            )
        names.append(f"{inv.brain_name}:{inv.brain_id}")
        companies.add(inv.company_id)
    if len(companies) != 1:
        raise UsageError("a batch purges brains of one company", "Purge each company's scratch brains apart.")
    expected = batch_confirmation(companies.pop(), names)
    if confirmation != expected:
        raise AbortedError(
            "the batch confirmation did not match; nothing was removed", f"Type exactly: {expected}"
        )
    receipts = []
    for home, passphrase in targets:
        with using_home(home):
            result = ceremony.start(
                passphrase,
                lambda typed: typed,  # the batch was confirmed above
                recreate=False,
                receipt_file=receipts_dir / f"{home.name}-{uuid.uuid4().hex[:12]}.receipt.json",
            )
        receipts.append(str(result["receipt"]))
    return receipts
