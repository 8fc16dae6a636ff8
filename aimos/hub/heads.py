"""What each device has pulled, told to the others: a hub that withholds records is found (pure).

The hub serves each device the records it asks for, and a device checks that each device's records
follow one another; what it cannot see alone is a hub that leaves out one device's newest records
for it (and serves them to the others). So with every push that sends rows a device adds one more
record of its own, signed and sealed like the rest (``HEADS``): for each other device, the newest
of its records this device has pulled (number and link). A device that pulls it remembers, per
device, the furthest any other device has got (in its hub state file); when another device has
pulled records of device D that the hub does not give this one, `aimos sync` and `aimos hub
status` say so, naming D, how many records and who has them.

A device can only claim to have seen more than there is (a false alarm, never a hidden record):
its claims are signed by it, and the hub cannot write them. A hub that stops serving a device
anything newer (of every device, claims included) is not found this way.
"""

from __future__ import annotations

import json
from typing import Any

# the records that carry a device's heads: a table name no brain has, in the records' own format
HEADS = "hub_heads"
HEADS_KEY = ("device", "through")


def heads_row(device: str, through: int, pulled: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """The heads record's row: this device, the hub order number its pulls reached, and per other
    device the newest record it pulled (number, link)."""
    heads = {d: [n, link] for d, (n, link) in sorted(pulled.items()) if d != device}
    return {"device": device, "through": through, "heads": json.dumps(heads, separators=(",", ":"))}


def claims_of(publisher: str, row: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """What a pulled heads record says its device has pulled, per device; nothing when it is not
    a heads record of that device (a record of another aimos: its claims are left out)."""
    try:
        heads = json.loads(row["heads"]) if row.get("device") == publisher else None
    except (ValueError, TypeError, RecursionError):
        return {}
    if not isinstance(heads, dict):
        return {}
    out = {}
    for device, head in heads.items():
        if (
            isinstance(head, list)
            and len(head) == 2
            and isinstance(head[0], int)
            and not isinstance(head[0], bool)
            and isinstance(head[1], str)
            and device != publisher
        ):
            out[str(device)] = (int(head[0]), head[1])
    return out


def merged(seen: Any, heard: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The furthest any other device has pulled of each device (``seen``, as the state file keeps
    it: device -> {n, link, by}), with what the heads records ``heard`` (publisher, row) say."""
    out: dict[str, dict[str, Any]] = {}
    if isinstance(seen, dict):
        out = {
            str(d): dict(s)
            for d, s in seen.items()
            if isinstance(s, dict) and isinstance(s.get("n"), int) and isinstance(s.get("by"), str)
        }
    for publisher, row in heard:
        for device, (n, link) in claims_of(publisher, row).items():
            if n > int(out.get(device, {}).get("n", 0)):
                out[device] = {"n": n, "link": link, "by": publisher}
    return out


def behind(
    seen: dict[str, dict[str, Any]],
    pulled: dict[str, tuple[int, str]],
    me: str,
    refused_from: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Each device of which another device has pulled more records than this one got from the hub
    (``pulled``: this device's newest of each, number and link), with how many, and who has them.
    A claim past the first record this device refuses of that device (``refused_from``: a device
    revoked or cut) counts up to the record before it: what follows is refused whoever has it (an
    older aimos took a cut device's number from the records it refused unread, and told it on)."""
    out = []
    for device, claim in sorted(seen.items()):
        here = pulled.get(device, (0, ""))[0]
        claimed = min(claim["n"], (refused_from or {}).get(device, claim["n"] + 1) - 1)
        if device != me and claimed > here:
            out.append({"device": device, "records": claimed - here, "seen_by": claim["by"], "here": here})
    return out


def said(entry: dict[str, Any]) -> str:
    """One entry of ``behind``, in words."""
    return (
        f"device {entry['device']} has {entry['records']:,} more records on the hub than it gave this "
        f"device (device {entry['seen_by']} has pulled them; this device has up to record "
        f"{entry['here']:,}): the hub is withholding or lost them; check who runs its database"
    )
