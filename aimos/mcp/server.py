"""The MCP server one agent runs (`aimos mcp --agent ID`, stdio): four tools over the same library
calls the CLI makes. Every call is signed with the agent's own epoch key, loaded from the keystore
for that call (request form 3), so the brain cannot tell it from any other signed request, and a
revoked or rotated epoch stops working at once. aimos's errors come back as tool errors worded as
the CLI words them (never a traceback, never a secret); the server keeps running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ErrorData, JSONRPCError, TextContent, ToolAnnotations
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from aimos import __version__
from aimos.errors import AimosError, UsageError
from aimos.identity.session import Brain, open_brain

T = TypeVar("T")

INSTRUCTIONS = (
    "aimos is the user's personal memory. Recall before answering questions about the user, their "
    "preferences, people, plans or past decisions; save what the user asks you to remember or what "
    "will clearly matter later; after using recalled memories, report whether they helped. Every call "
    "is signed with your own identity and kept on the record; nothing saved is ever deleted."
)
MAX_LIMIT = 200


class SavedMemory(TypedDict):
    memory_id: str
    status: str  # saved | duplicate | quarantined
    supersedes: str | None
    event_id: str


class RecallHit(TypedDict):
    rank: int
    memory_id: str
    key: str | None
    type: str
    text: str
    score: float
    relevance: float
    trust: float
    weight: float
    label: str


class Recalled(TypedDict):
    results: list[RecallHit]
    abstained: bool
    withheld_count: int
    receipt_id: str
    merkle_root: str


class Outcome(TypedDict):
    outcome_id: str
    memory_id: str
    receipt_id: str
    terminal: str  # authorized_transition | signed_noop | occurrence_observation
    old_weight: float
    new_weight: float


class Version(TypedDict):
    number: int
    of: int
    state: str  # current | superseded
    supersedes: str | None
    superseded_by: str | None


class ShownMemory(TypedDict):
    memory_id: str
    text: str
    key: str | None
    type: str
    scope: str
    created_at: int
    weight: float
    label: str
    version: Version


def cli_words(exc: AimosError) -> str:
    """The error as `aimos` prints it on stderr."""
    return f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")


def result(text: str, structured: Any) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def build_server(agent: str) -> MCPServer:
    """An MCP server whose every tool call is signed as ``agent``."""
    server = MCPServer(name="aimos", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    one_at_a_time = threading.Lock()  # tools run in worker threads; the brain is written one call at a time

    def call(work: Callable[[Brain], T]) -> T:
        import apsw

        with one_at_a_time:
            try:
                with open_brain(write=True) as brain:
                    return work(brain)
            except AimosError as exc:
                raise ToolError(cli_words(exc)) from None
            except apsw.BusyError:
                raise ToolError(
                    "error: the brain is busy (another process holds its write lock)\nhint: try again"
                ) from None
            except Exception as exc:  # a bug: say so, without a traceback or anything it held
                raise ToolError(
                    f"error: internal error ({type(exc).__name__}); nothing secret was printed\n"
                    "hint: run the same action with the aimos CLI (AIMOS_DEBUG=1) to see why"
                ) from None

    @server.tool(
        annotations=ToolAnnotations(title="Save a memory", read_only_hint=False, destructive_hint=False),
        description=(
            "Save one memory (a fact, preference, decision or note) so it can be recalled later. Use it when "
            "the user asks you to remember something or states something that will matter later. Saving the "
            "same text again only records that it was seen again. Never save passwords or keys: "
            "they are refused."
        ),
    )
    def save_memory(
        text: Annotated[str, Field(description="The memory, in plain words, one fact per memory.")],
        key: Annotated[str | None, Field(description="Optional stable key, e.g. preference:coffee.")] = None,
        type: Annotated[
            str, Field(description="Memory type, e.g. note, fact, preference, procedure.")
        ] = "note",
        scope: Annotated[str, Field(description="Scope, e.g. personal or work.")] = "personal",
        clearance: Annotated[int, Field(description="Clearance level 0..12, within your grant.")] = 5,
        data_class: Annotated[
            Literal["public", "internal", "confidential", "restricted"], Field(description="Data class.")
        ] = "internal",
    ) -> Annotated[CallToolResult, SavedMemory]:
        from aimos.epistemic.chain import signed_save
        from aimos.memory.save import build_save_body

        saved = call(
            lambda brain: signed_save(
                brain,
                agent,
                lambda b: build_save_body(
                    company_id=b.company_id,
                    value=text,
                    key=key,
                    scope=scope,
                    memory_type=type,
                    clearance_level=clearance,
                    data_class=data_class,
                    source=f"mcp:{agent}",
                ),
            )
        )
        said = {
            "saved": f"saved memory {saved.memory_id}",
            "duplicate": f"already saved as {saved.memory_id}; recorded that it was seen again",
            "quarantined": f"saved {saved.memory_id} in retained quarantine (it carries a canary marker)",
        }.get(saved.status, f"{saved.status} {saved.memory_id}")
        return result(
            said,
            SavedMemory(
                memory_id=saved.memory_id,
                status=saved.status,
                supersedes=saved.supersedes,
                event_id=saved.event_id,
            ),
        )

    @server.tool(
        annotations=ToolAnnotations(title="Recall memories", read_only_hint=False, destructive_hint=False),
        description=(
            "Search the user's memories with a plain-words query; returns the best matches with ids, scores "
            "and trust labels, and a signed receipt. Use it before answering anything about the user, their "
            "people, plans, preferences or past decisions. Memories labelled untrusted are withheld."
        ),
    )
    def recall(
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        limit: Annotated[
            int,
            Field(description="How many results, 1..200.", json_schema_extra={"minimum": 1, "maximum": 200}),
        ] = 10,
    ) -> Annotated[CallToolResult, Recalled]:
        from aimos.recall.pipeline import recall_as

        if isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ToolError(
                cli_words(UsageError(f"limit must be an integer from 1 to {MAX_LIMIT}", "Use 1..200."))
            )
        got = call(lambda brain: recall_as(brain, agent, query, limit=limit))
        hits = [
            RecallHit(
                rank=r["rank"],
                memory_id=r["memory_id"],
                key=r["key"],
                type=r["memory_type"],
                text=r["value"],
                score=r["score"],
                relevance=r["relevance"],
                trust=r["trust"],
                weight=r["weight"],
                label=r["label"],
            )
            for r in got.results
        ]
        receipt = got.receipt
        lines = [f"{h['rank']}. [{h['memory_id']}] {h['text']}" for h in hits] or [
            "No trusted memory matches (aimos abstains)."
        ]
        if got.withheld:
            lines.append(f"{len(got.withheld)} untrusted memory(s) withheld.")
        lines.append(f"receipt {receipt['receipt_id']} root {receipt['merkle_root']}")
        return result(
            "\n".join(lines),
            Recalled(
                results=hits,
                abstained=got.abstained,
                withheld_count=len(got.withheld),
                receipt_id=str(receipt["receipt_id"]),
                merkle_root=str(receipt["merkle_root"]),
            ),
        )

    @server.tool(
        annotations=ToolAnnotations(title="Report an outcome", read_only_hint=False, destructive_hint=False),
        description=(
            "Say whether a recalled memory helped (good) or not (bad). Use it after you used, or decided not "
            "to trust, a memory that recall returned: good raises its weight in future recalls, "
            "bad lowers it."
        ),
    )
    def report_outcome(
        memory_id: Annotated[str, Field(description="The memory's id, as recall returned it.")],
        outcome: Annotated[Literal["good", "bad"], Field(description="good: it helped; bad: it did not.")],
        receipt_id: Annotated[
            str | None, Field(description="The recall's receipt id (default: your latest recall of it).")
        ] = None,
    ) -> Annotated[CallToolResult, Outcome]:
        from aimos.learning.outcomes import give_feedback

        done = call(
            lambda brain: give_feedback(
                brain, agent, memory_id, good=outcome == "good", receipt_ref=receipt_id
            )
        )
        old, new = done.old_weight_milli / 1000, done.new_weight_milli / 1000
        said = (
            f"weight {old:.3f} -> {new:.3f}"
            if done.terminal == "authorized_transition"
            else f"weight stays {old:.3f}"
        )
        return result(
            f"{said} (outcome {done.outcome_id})",
            Outcome(
                outcome_id=done.outcome_id,
                memory_id=done.memory_id,
                receipt_id=done.receipt_id,
                terminal=done.terminal,
                old_weight=old,
                new_weight=new,
            ),
        )

    @server.tool(
        annotations=ToolAnnotations(title="Show a memory", read_only_hint=True),
        description=(
            "Show one memory by id: its full text, whether it is the current version, its weight and its "
            "trust label. Use it to read a memory recall returned in full, or to check it before "
            "relying on it."
        ),
    )
    def show_memory(
        memory_id: Annotated[
            str, Field(description="The memory's id (or a unique prefix of 8+ characters).")
        ],
    ) -> Annotated[CallToolResult, ShownMemory]:
        from aimos.memory.versions import show_as

        d: dict[str, Any] = call(lambda brain: show_as(brain, agent, memory_id))
        v = d["version"]
        shown = ShownMemory(
            memory_id=d["memory_id"],
            text=d["value"],
            key=d["key"],
            type=d["memory_type"],
            scope=d["scope"],
            created_at=d["created_at"],
            weight=d["weight"],
            label=d["epistemic_label"],
            version=Version(
                number=v["number"],
                of=v["of"],
                state=v["state"],
                supersedes=v["supersedes"],
                superseded_by=v["superseded_by"],
            ),
        )
        state = v["state"] + (f", superseded by {v['superseded_by']}" if v["superseded_by"] else "")
        return result(
            f"{d['value']}\n[{d['memory_id']}] version {v['number']} of {v['of']} ({state}), "
            f"weight {d['weight']:.3f}, label {d['epistemic_label']}",
            shown,
        )

    return server


def protocol_error(problem: Exception) -> JSONRPCError:
    """The JSON-RPC answer to a line that is not a message: -32700 for text that is not JSON,
    -32600 for JSON that is not a JSON-RPC message (the id cannot be known, so it is null)."""
    from pydantic import ValidationError

    not_json = isinstance(problem, ValidationError) and any(
        e.get("type") == "json_invalid" for e in problem.errors()
    )
    if not_json:
        return JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error: not JSON")
        )
    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(code=INVALID_REQUEST, message="Invalid request: not a JSON-RPC message"),
    )


async def serve_stdio(server: MCPServer) -> None:
    """Serve MCP on stdin/stdout. The SDK skips a line it cannot parse without a word; here the
    client gets a JSON-RPC error for it, and the server goes on reading."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (incoming, outgoing):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def screen_lines() -> None:
            async with send:
                async for item in incoming:
                    if isinstance(item, Exception):
                        await outgoing.send(SessionMessage(protocol_error(item)))
                    else:
                        await send.send(item)

        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our stream in front
        async with anyio.create_task_group() as group:
            group.start_soon(screen_lines)
            await lowlevel.run(receive, outgoing, lowlevel.create_initialization_options())
