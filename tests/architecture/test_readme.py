"""The README stays a newcomer's page: it opens with the project's two commands (the quickstart and
the test suite's `bash .ci/run`), stays within 300 lines, and every relative link in it and in the
docs it sends readers to (docs/, ARCHITECTURE.md, COVERAGE.md) reaches a file and, when it names
one, a heading there. Every page in docs/ is linked from the README, so none is left unreachable.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 300
FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def pages() -> list[Path]:
    return [README, ROOT / "ARCHITECTURE.md", ROOT / "COVERAGE.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced blocks and code spans, where a bracket is not a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code marks and punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``page`` that reaches no file under ``root`` (or no heading it names),
    with why."""
    broken = []
    for target in LINK.findall(prose(page.read_text("utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...
            continue
        path_part, _, fragment = target.partition("#")
        goal = (page.parent / path_part).resolve() if path_part else page
        if not goal.is_relative_to(root.resolve()) or not goal.exists():
            broken.append(f"{page.name}: {target} (no such file in the repository)")
            continue
        if fragment and goal.suffix == ".md":
            anchors = {anchor(h) for h in HEADING.findall(FENCE.sub("", goal.read_text("utf-8")))}
            if fragment not in anchors:
                broken.append(f"{page.name}: {target} (no heading #{fragment} in {goal.name})")
    return broken


def test_the_readme_is_at_most_300_lines() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines: move detail to docs/ and link it"


def test_the_readme_opens_with_the_two_commands() -> None:
    """Before the first section: the one line that sets aimos up and runs its main job, then the
    command that runs the whole suite, which is CI's own script."""
    text = README.read_text("utf-8")
    opening = text.split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", opening, re.M | re.S)
    assert len(blocks) == 2, f"the README's opening holds {len(blocks)} sh blocks, not the two commands"
    quickstart, suite = (block.strip() for block in blocks)
    assert "\n" not in quickstart, "the quickstart is one command line"
    for step in ("pip install", "aimos install", "aimos save", "aimos recall"):
        assert step in quickstart, f"the quickstart does not {step}"
    assert suite == "bash .ci/run"
    assert (ROOT / ".ci" / "run").is_file()
    said = opening.find("aimos is")
    assert 0 <= said < opening.index("```sh"), "the README says what aimos is before its commands"


def test_every_relative_link_resolves() -> None:
    broken = [problem for page in pages() for problem in broken_links(page)]
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {
        (ROOT / target.partition("#")[0]).resolve()
        for target in LINK.findall(prose(README.read_text("utf-8")))
    }
    orphans = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert not orphans, f"docs pages the README does not link: {orphans}"


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("[moved](gone.md)", "no such file"),
        ("[section](verify.md#what-verify-sees)", "no heading"),
        ("[up and out](../../etc/passwd)", "no such file"),
        ("[here](#no-such-section)", "no heading"),
    ],
)
def test_a_broken_link_is_caught(tmp_path: Path, link: str, why: str) -> None:
    """The checker itself: a careless edit (a page moved, a heading renamed, a path out of the
    repository) is named, while a link in code is not a link."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "verify.md").write_text("# What verify proves\n\n## What it cannot\n")
    page = tmp_path / "docs" / "page.md"
    good = "[fine](verify.md#what-it-cannot) [top](#a-page) [web](https://example.org/x.md)"
    page.write_text(f"# A page\n\n{good} {link}.\n\n```sh\necho [not](a-link.md)\n```\n`[nor](this.md)`\n")
    found = broken_links(page, root=tmp_path)
    assert len(found) == 1 and why in found[0], found
