"""What a housekeeper job is given: the writer's connection, the housekeeper's signer, the
brain, the time and run id, and a list for what a person should look at. The jobs import it from
here; the registry in `jobs/__init__.py` imports the jobs."""

from __future__ import annotations

from dataclasses import dataclass, field

from aimos.identity.signer import Signer
from aimos.store.connection import Connection


@dataclass
class JobContext:
    conn: Connection  # the writer's connection
    housekeeper: Signer
    company_id: str
    brain_id: str
    now: int
    run_id: str
    attention: list[str] = field(default_factory=list)
