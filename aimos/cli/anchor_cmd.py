"""`aimos anchor`: take the brain this home finds as yours again, with the master passphrase."""

from __future__ import annotations

import typer

from aimos.cli.options import PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, out, say


def register(app: typer.Typer) -> None:
    @app.command("anchor")
    def anchor_cmd(
        passphrase_fd: int = PASSPHRASE_FD,
        json_out: bool = json_option("what was anchored"),
    ) -> None:
        """Anchor this brain's master and newest seal here.

        Anchor the brain here as yours: its master in anchors.json and its newest seal outside it.

        Needed when requests refuse a brain this home holds no anchor for (moved here from elsewhere,
        anchors.json lost) or whose freshness anchor is gone. Asks for the master passphrase, prints
        the master fingerprint to compare with the one install printed, and names the revocations
        the brain does not hold that it held before (revoke those agents again). Writes nothing to
        the brain."""
        from aimos.actions.anchoring import anchor
        from aimos.actions.session import open_brain
        from aimos.identity.passphrase import read_passphrase

        with open_brain(write=False, anchored=False) as brain:
            passphrase = read_passphrase(fd=passphrase_fd, purpose="anchor this brain")
            done = anchor(brain, passphrase)
        if json_out:
            emit_json(done.to_json())
            return
        out(f"brain               {done.brain_id}  ({done.brain_path})")
        out(f"master fingerprint  {done.master_fingerprint}")
        say("compare the fingerprint with the one `aimos install` printed: it must be the same")
        if done.master_anchored == "added":
            say("anchored: anchors.json now names this master for the brain")
        else:
            say("anchors.json already named this master for the brain")
        if done.freshness == "re-anchored":
            say(f"the freshness anchor was gone: re-anchored at seal #{done.newest_seal}")
        if done.behind_kept:
            say(
                f"this brain (newest seal #{done.newest_seal}) does not descend from seal #{done.kept_seal} "
                "the keystore's copy held: writes made since then are not in this brain"
            )
        for gone in done.missing_revocations:
            say(
                f"revocation missing: agent {gone['agent_id']} (epoch from {gone['valid_from']}) was "
                f"revoked and this brain does not hold it: aimos agent revoke {gone['agent_id']}"
            )
