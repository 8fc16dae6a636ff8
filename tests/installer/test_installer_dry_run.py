"""`aimos install --dry-run`: the plan as canonical JSON and its hash; nothing changes."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from support.installer import BRAIN, CLI_LOG, run_aimos, tree

from aimos.crypto.canonical import canonical_json

FLAGS = ("--yes", "--keystore", "file", "--service", "none", "--agent-id", "ada", "--clearance", "7")


def assert_nothing_installed(home: Path) -> None:
    assert tree(home, ignore=CLI_LOG) == {}, f"a dry run left {sorted(tree(home, ignore=CLI_LOG))}"
    assert not (home / BRAIN).exists()


def test_dry_run_prints_the_canonical_plan_and_its_hash(aimos_home: Path) -> None:
    from aimos.installer.setup import STEPS, plan_sha256

    result = run_aimos("install", *FLAGS, "--dry-run").ok()
    lines = result.out.splitlines()
    assert len(lines) == 2, result.describe()
    plan_line, hash_line = lines
    plan = json.loads(plan_line)
    assert canonical_json(plan) == plan_line.encode("utf-8"), "the printed plan is not canonical JSON"
    found = re.fullmatch(r"plan_sha256 ([0-9a-f]{64})", hash_line)
    assert found, result.describe()
    assert found.group(1) == hashlib.sha256(plan_line.encode("utf-8")).hexdigest()
    assert found.group(1) == plan_sha256(plan)
    assert "nothing was changed" in result.err, result.describe()

    # the plan says what the flags asked for
    assert plan["schema"] == "hom.aimos.first-launch-onboarding-plan/v1"
    assert plan["keystore"] == "file"
    assert plan["agent"]["agent_id"] == "ada" and plan["agent"]["clearance"] == 7
    assert plan["agent"]["data_class"] == "confidential" and plan["agent"]["write_allowed"] is True
    assert plan["brain"]["path"] == str(aimos_home / BRAIN)
    assert plan["guides"]["count"] == 8 and plan["guides"]["scope"] == "system"
    assert plan["housekeeper"]["service"] == "none"
    assert plan["steps"] == list(STEPS)
    assert_nothing_installed(aimos_home)

    # the same choices give the same hash; another choice another hash
    assert run_aimos("install", *FLAGS, "--dry-run").ok().out == result.out
    other = run_aimos("install", *FLAGS, "--clearance", "6", "--dry-run").ok()
    assert other.out.splitlines()[1] != hash_line
    assert json.loads(other.out.splitlines()[0])["agent"]["clearance"] == 6

    # --json: {plan, plan_sha256}, the same plan and hash
    document = run_aimos("install", *FLAGS, "--dry-run", "--json").json()
    assert set(document) == {"plan", "plan_sha256"}
    assert document["plan"] == plan and document["plan_sha256"] == found.group(1)
    assert_nothing_installed(aimos_home)


def test_dry_run_refuses_bad_input_like_install(aimos_home: Path) -> None:
    refused = run_aimos("install", "--yes", "--dry-run", "--clearance", "11")
    assert refused.code == 2, refused.describe()
    assert "Traceback" not in refused.both and refused.out == "", refused.describe()
    assert_nothing_installed(aimos_home)
