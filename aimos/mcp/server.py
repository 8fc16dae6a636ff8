"""The MCP server one agent runs (`aimos mcp --as ID`, stdio): four tools over the same library
calls the CLI makes. Every call is signed with the agent's own epoch key (request form 3), so the
brain cannot tell it from any other signed request, and a revoked or rotated epoch stops working
at once: the epoch is checked against the brain at every call. The key itself is read from the
keystore once per server (identity.keystore.KeystoreCache), or at every call with --no-key-cache.
aimos's errors come back as tool errors worded as the CLI words them (never a traceback, never a
secret); the server keeps running. While the agent's epoch is about to end, every result's text
ends with the CLI's expiry warning.

The server keeps one brain session open from call to call (actions.session.KeptBrain): a call uses
it only when nothing has changed the brain since the last call ended, and opens the brain anew,
with every check, otherwise. What a call does after its answer (the agreement detector after a
save, moving the WAL into the brain file) runs once it has answered, before the next call starts.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ErrorData, JSONRPCError, TextContent, ToolAnnotations
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from aimos import __version__
from aimos.actions.session import Brain, KeptBrain
from aimos.errors import AimosError, BusyError, ExpiryWarning, UsageError
from aimos.identity.keystore import KeystoreCache
from aimos.memory.gates import NOT_ECHOED, NOT_ECHOED_HINT, secret_kind
from aimos.memory.redaction import shown_text
from aimos.store.connection import engine_error_name, translate_errors
from aimos.store.queries.mcp import move_wal_into_file
from aimos.vocabulary import CLEARANCE_MAX, DATA_CLASSES
from aimos.vocabulary import RECALL_MAX_LIMIT as MAX_LIMIT

if TYPE_CHECKING:
    from aimos.recall.pipeline import ShowResult

T = TypeVar("T")

INSTRUCTIONS = (
    "aimos is the user's personal memory. Recall before answering questions about the user, their "
    "preferences, people, plans or past decisions; save what the user asks you to remember or what "
    "will clearly matter later; after using recalled memories, report whether they helped. Every call "
    "is signed with your own identity and kept on the record; nothing saved is ever deleted."
)
# Ids are taken whole: a prefix would let an agent probe for the ids of memories (and receipts)
# beyond its grant, since resolving one names the full id in the refusal before any grant check.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
# Tools run in worker threads; the brain is written one call at a time (one server per process).
# A call's work after its answer holds it too (released by the thread that does that work).
BRAIN_CALLS = threading.Lock()
STOPPING = threading.Event()  # set on SIGINT/SIGTERM: no call starts after it
STOP_WAIT_SECONDS = 30.0  # how long a signal waits for the call in progress before leaving
# The expiry warnings the brain call of the tool call running in this thread raised (the agent's
# epoch ends soon): the tool's result text carries them.
NOTES = threading.local()


class SavedMemory(TypedDict):
    memory_id: str
    status: str  # saved | duplicate | quarantined
    supersedes: str | None
    event_id: str


# the recall result fields a hit carries, and the two it names otherwise
HIT_FIELDS = "rank memory_id key memory_type value score relevance trust weight label".split()
HIT_NAMES = {"memory_type": "type", "value": "text"}


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
    weight_bearing: bool  # False: kept as evidence with no weight authority
    evidence_balance: int  # this agent's good minus bad outcomes on the memory that counted
    why: str  # why the weight moved (or did not) that way


class Version(TypedDict):
    number: int
    of: int
    state: str  # current | superseded
    supersedes: str | None
    superseded_by: str | None


class ShownMemory(TypedDict):
    memory_id: str
    text: str  # empty when withheld
    withheld: str | None  # why the text is withheld (as recall would withhold it), else null
    key: str | None
    type: str
    scope: str
    created_at: int
    weight: float
    label: str
    version: Version


def cli_words(exc: AimosError) -> str:
    """The error as `aimos` prints it on stderr (and, as there, never quoting a secret the agent
    gave: the kind of secret instead)."""
    from aimos.errors import SecretDetectedError

    if not isinstance(exc, SecretDetectedError):
        kind = secret_kind(f"{exc.message}\n{exc.hint}")
        if kind is not None:
            return f"error: {NOT_ECHOED.format(kind=kind)}\nhint: {NOT_ECHOED_HINT}"
    return f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")


class ScreenedServer(MCPServer):
    """The SDK's server, whose refusals of a tool call's arguments (a schema error quotes the value
    given) never quote a secret: the kind of secret instead; ``agent``: who its tool calls are signed
    as; ``brains``: its kept brain session."""

    brains: KeptBrain | None = None
    agent: str = ""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            kind = secret_kind(str(exc))
            if kind is None:
                raise
            raise ToolError(f"error: {NOT_ECHOED.format(kind=kind)}\nhint: {NOT_ECHOED_HINT}") from None


def result(text: str, structured: Any) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


class Refused(Exception):
    """A refusal worded as the CLI words it; the tool returns it as a tool error, text unchanged
    (a ToolError would come back prefixed "Error executing tool NAME: ")."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def result(self) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=self.text)], is_error=True)


INTERNAL = (
    "error: internal error ({name}); nothing secret was printed\n"
    "hint: run the same action with the aimos CLI (AIMOS_DEBUG=1) to see why"
)


@contextmanager
def expiry_notes() -> Iterator[None]:
    """Keep the expiry warnings raised inside (once each) in NOTES, for the tool's result text.
    Called under BRAIN_CALLS: one tool call at a time changes the warning filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExpiryWarning)
        try:
            yield
        finally:
            said = (str(w.message) for w in caught if issubclass(w.category, ExpiryWarning))
            NOTES.lines = list(dict.fromkeys(said))


def guarded(tool: Callable[..., CallToolResult], *args: Any) -> CallToolResult:
    """The tool's result, or its refusal as a tool error, with any expiry warning its brain call
    raised. A bug is an internal error without a traceback: the SDK would log one (with the
    exception's text, which may quote a memory) on stderr, and clients keep a server's stderr in
    their logs."""
    NOTES.lines = []
    try:
        answer = tool(*args)
    except Refused as refused:
        answer = refused.result()
    except Exception as exc:
        answer = Refused(INTERNAL.format(name=type(exc).__name__)).result()
    first = answer.content[0]
    if NOTES.lines and isinstance(first, TextContent):
        answer.content[0] = TextContent(type="text", text="\n".join([first.text, *NOTES.lines]))
    return answer


def full_id(value: str, what: str) -> str:
    """A whole id (as recall or save_memory returned it), lowercased; refuses a prefix."""
    value = value.strip()
    if not re.fullmatch(UUID_PATTERN, value):
        raise Refused(
            cli_words(
                UsageError(
                    f"that is not a full {what} id",
                    f"Give the whole {what} id (36 characters) as aimos returned it.",
                )
            )
        )
    return value.lower()


def call_brain(
    brains: KeptBrain, work: Callable[[Brain], T], then: Callable[[Brain], object] | None = None
) -> T:
    """``work`` on the brain, one call at a time; then, once the caller has the answer and before
    the next call starts, ``then`` on the brain (a save's agreement detector)."""
    BRAIN_CALLS.acquire()
    try:
        answer = _on_brain(brains, work)
    except BaseException:
        BRAIN_CALLS.release()
        raise
    try:
        _after_worker().put((brains, then))
    except BaseException:
        BRAIN_CALLS.release()
    return answer


_AFTER: list[queue.SimpleQueue[tuple[KeptBrain, Callable[[Brain], object] | None]]] = []


def _after_worker() -> queue.SimpleQueue[tuple[KeptBrain, Callable[[Brain], object] | None]]:
    """The queue of the one thread that does the calls' work after their answers (started at the
    first call; a thread started per call cost milliseconds of the answer on a busy machine). A
    daemon: the server leaves through close_brain or stop_now, which wait for BRAIN_CALLS."""
    if not _AFTER:
        jobs: queue.SimpleQueue[tuple[KeptBrain, Callable[[Brain], object] | None]] = queue.SimpleQueue()

        def work() -> None:
            while True:
                _after_answer(*jobs.get())

        threading.Thread(target=work, name="aimos-after-call", daemon=True).start()
        _AFTER.append(jobs)
    return _AFTER[0]


def _on_brain(brains: KeptBrain, work: Callable[[Brain], T]) -> T:
    if STOPPING.is_set():
        raise Refused("error: aimos mcp is stopping\nhint: the client will start it again")
    try:
        # the database engine's errors that reach here (not met by the store on their way) as
        # aimos errors; aimos's own errors are refusals worded as the CLI words them
        with translate_errors():
            try:
                with expiry_notes(), brains.session() as brain:
                    return work(brain)
            except AimosError as exc:
                raise Refused(cli_words(exc)) from None
    except Refused:
        raise
    except BusyError:  # the engine found the brain busy or locked
        raise Refused(
            "error: the brain is busy (another process holds its write lock)\nhint: try again"
        ) from None
    except Exception as exc:  # a bug: say so, without a traceback or anything it held
        raise Refused(INTERNAL.format(name=engine_error_name(exc))) from None


def _after_answer(brains: KeptBrain, then: Callable[[Brain], object] | None) -> None:
    """After a call's answer, holding BRAIN_CALLS (released here): ``then``, and the WAL moved
    into the brain file (as closing a session did), so the file alone is the whole brain while the
    server waits. A failure here is met again by the next call, which then opens the brain anew."""
    try:
        with contextlib.suppress(Exception), brains.session() as brain:
            if then is not None:
                then(brain)
            move_wal_into_file(brain.conn)
    finally:
        BRAIN_CALLS.release()


def build_server(agent: str, keystores: KeystoreCache | None = None, *, keep_brain: bool = True) -> MCPServer:
    """An MCP server whose every tool call is signed as ``agent``; ``keystores``: the keys read
    once for the server's life (None: from the keystore at every call); ``keep_brain`` off: the
    brain opened anew at every call (the benchmark's baseline)."""
    server = ScreenedServer(name="aimos", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    server.agent = agent
    server.brains = KeptBrain(keystores, keep=keep_brain)
    for tool, settings in _TOOLS:
        server.tool(**settings)(tool)
    return server


Tool = Callable[..., CallToolResult]
# The tools, in the order a client lists them, with their settings (title, hints, description):
# each is a function of its arguments and the call's context, which names the server (its agent
# and kept brain session); the SDK leaves the context out of the tool's input schema.
_TOOLS: list[tuple[Tool, dict[str, Any]]] = []


def _tool(title: str, *, read_only: bool = False) -> Callable[[Tool], Tool]:
    """A tool of the server, titled ``title``, described to the agent by its docstring (on one
    line); ``read_only``: it changes nothing (else: it writes, and destroys nothing)."""

    def register(tool: Tool) -> Tool:
        hints = (
            {"read_only_hint": True} if read_only else {"read_only_hint": False, "destructive_hint": False}
        )
        annotations = ToolAnnotations(title=title, **hints)
        _TOOLS.append(
            (tool, {"annotations": annotations, "description": " ".join(str(tool.__doc__).split())})
        )
        return tool

    return register


def _id_field(description: str) -> Any:
    """A tool argument that is a whole id (UUID_PATTERN)."""
    return Field(description=description, json_schema_extra={"pattern": UUID_PATTERN})


class Caller:
    """Who a tool call is made as (the server's agent) and its brain calls (one at a time)."""

    def __init__(self, ctx: Context[Any, Any]) -> None:
        server = ctx.mcp_server
        assert isinstance(server, ScreenedServer) and server.brains is not None
        self.agent = server.agent
        self.brains = server.brains

    def call(self, work: Callable[[Brain], T], then: Callable[[Brain], object] | None = None) -> T:
        return call_brain(self.brains, work, then)


@_tool("Save a memory")
def save_memory(
    text: Annotated[str, Field(description="The memory, in plain words, one fact per memory.")],
    ctx: Context[Any, Any],
    key: Annotated[str | None, Field(description="Optional stable key, e.g. preference:coffee.")] = None,
    type: Annotated[str, Field(description="Memory type, e.g. note, fact, preference, procedure.")] = "note",
    scope: Annotated[str, Field(description="Scope, e.g. personal or work.")] = "personal",
    clearance: Annotated[
        int | None,
        Field(
            description="Clearance level 0..12 within your grant (default 5, or your ceiling if lower).",
            json_schema_extra={"minimum": 0, "maximum": CLEARANCE_MAX},
        ),
    ] = None,
    data_class: Annotated[
        str | None,
        Field(
            description=f"Data class within your grant: {', '.join(DATA_CLASSES)} "
            "(default internal, or your ceiling if lower).",
            pattern="^(" + "|".join(DATA_CLASSES) + ")$",
        ),
    ] = None,
) -> Annotated[CallToolResult, SavedMemory]:
    """Save one memory (a fact, preference, decision or note) so it can be recalled later. Use it when
    the user asks you to remember something or states something that will matter later. Saving the same
    text again only records that it was seen again. Never save passwords or keys: they are refused."""
    return guarded(save, ctx, text, key, type, scope, clearance, data_class)


def save(
    ctx: Context[Any, Any],
    text: str,
    key: str | None,
    type: str,
    scope: str,
    clearance: int | None,
    data_class: str | None,
) -> CallToolResult:
    from aimos.actions.memory import NewMemory, settle_after_save
    from aimos.actions.memory import save as save_memory

    caller = Caller(ctx)
    if clearance is not None and (isinstance(clearance, bool) or not 0 <= clearance <= CLEARANCE_MAX):
        raise Refused(cli_words(UsageError(f"clearance must be from 0 to {CLEARANCE_MAX}", "Use 0..12.")))

    memory = NewMemory(
        value=text,
        key=key,
        scope=scope,
        memory_type=type,
        clearance=clearance,
        data_class=data_class,
        source=f"mcp:{caller.agent}",
    )
    # answered before the agreement detector runs (a recall judges what waits in its own
    # transaction, so no recall decides before it has) and before the memory's vector is made
    saved = caller.call(
        lambda brain: save_memory(brain, caller.agent, memory, settled=False), then=settle_after_save
    )
    said = {
        "saved": f"saved memory {saved.memory_id}",
        "duplicate": saved.duplicate_words(),
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


@_tool("Recall memories")
def recall(
    query: Annotated[str, Field(description="What to look for, in plain words.")],
    ctx: Context[Any, Any],
    limit: Annotated[
        int,
        Field(description="How many results, 1..200.", json_schema_extra={"minimum": 1, "maximum": 200}),
    ] = 10,
    guides: Annotated[
        bool,
        Field(
            description="Also search aimos's own guides (searched anyway when the query names aimos).",
            strict=True,
        ),
    ] = False,
) -> Annotated[CallToolResult, Recalled]:
    """Search the user's memories with a plain-words query; returns the matches with ids, scores, trust
    labels (most memories are not judged yet) and a signed receipt. Use it before answering anything
    about the user, their people, plans, preferences or past decisions. Untrusted memories are withheld;
    only memories that match come back: fewer than the limit, or none."""
    return guarded(recall_memories, ctx, query, limit, guides)


def _hit(r: Mapping[str, Any]) -> RecallHit:
    """A recall entry (recall.pipeline.RecallEntry) as the tool returns it: HIT_FIELDS, renamed."""
    return cast(RecallHit, {HIT_NAMES.get(f, f): r[f] for f in HIT_FIELDS})


def recall_memories(ctx: Context[Any, Any], query: str, limit: int, guides: bool) -> CallToolResult:
    from aimos.actions.labels import label_words, withheld_count
    from aimos.actions.recall import NOTHING_MATCHES, recall_as
    from aimos.vocabulary import UNVERIFIED

    caller = Caller(ctx)
    if isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise Refused(cli_words(UsageError(f"limit must be an integer from 1 to {MAX_LIMIT}", "Use 1..200.")))
    got = caller.call(lambda brain: recall_as(brain, caller.agent, query, limit=limit, guides=guides))
    hits = [_hit(r) for r in got.results]
    receipt = got.receipt
    texts = [shown_text(r) for r in got.results]
    # a judged memory says so in the text too: a client that shows its model only the text must
    # not pass a disputed memory off as a plain one
    lines = [
        f"{h['rank']}. [{h['memory_id']}]"
        + ("" if h["label"] == UNVERIFIED else f" ({label_words(h['label'])})")
        + f" {t}"
        for h, t in zip(hits, texts, strict=True)
    ] or [NOTHING_MATCHES]
    if got.withheld:
        lines.append(f"{withheld_count(len(got.withheld))}.")
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


@_tool("Report an outcome")
def report_outcome(
    memory_id: Annotated[str, _id_field("The memory's id, as recall returned it.")],
    outcome: Annotated[Literal["good", "bad"], Field(description="good: it helped; bad: it did not.")],
    ctx: Context[Any, Any],
    receipt_id: Annotated[
        str | None, _id_field("The recall's receipt id (default: your latest recall of it).")
    ] = None,
) -> Annotated[CallToolResult, Outcome]:
    """Say whether a recalled memory helped (good) or not (bad). Use it after you used, or decided not
    to trust, a memory that recall returned. Its weight follows the balance of your evidence on it (so a
    bad after two goods can still raise it; the result says why); one outcome per recall counts, and one
    agent's evidence scales a weight at most between half and double."""
    return guarded(report, ctx, memory_id, outcome, receipt_id)


def report(ctx: Context[Any, Any], memory_id: str, outcome: str, receipt_id: str | None) -> CallToolResult:
    from aimos.actions.feedback import explain, give_feedback, weight_words

    caller = Caller(ctx)
    mid = full_id(memory_id, "memory")
    rid = None if receipt_id is None else full_id(receipt_id, "receipt")
    done = caller.call(
        lambda brain: give_feedback(brain, caller.agent, mid, good=outcome == "good", receipt_ref=rid)
    )
    old, new = done.old_weight_milli / 1000, done.new_weight_milli / 1000
    why = explain(done)
    fields = {name: getattr(done, name) for name in ("outcome_id", "memory_id", "receipt_id", "terminal")}
    reported = cast(
        Outcome,
        {
            **fields,
            "old_weight": old,
            "new_weight": new,
            "weight_bearing": done.weight_bearing,
            "evidence_balance": done.agent_good - done.agent_bad,
            "why": why,
        },
    )
    said = f" (outcome {done.outcome_id})" if done.outcome_id else ""
    return result(f"{weight_words(done)}: {why}{said}", reported)


@_tool("Show a memory", read_only=True)
def show_memory(
    memory_id: Annotated[str, _id_field("The memory's id, as recall or save_memory returned it.")],
    ctx: Context[Any, Any],
) -> Annotated[CallToolResult, ShownMemory]:
    """Show one memory by id: its full text, whether it is the current version, its weight and its trust
    label. Use it to read a memory recall returned in full, or to check it before relying on it."""
    return guarded(show, ctx, memory_id)


def _version(v: Mapping[str, Any]) -> Version:
    """A memory's place in its version chain (memory.versions.VersionPlace), as show names it."""
    return cast(Version, {field: v[field] for field in Version.__annotations__})


def show(ctx: Context[Any, Any], memory_id: str) -> CallToolResult:
    from aimos.actions.labels import label_words, withheld_words
    from aimos.actions.memory import show as show_memory

    caller = Caller(ctx)
    mid = full_id(memory_id, "memory")
    d: ShowResult = caller.call(lambda brain: show_memory(brain, caller.agent, mid))
    v = d["version"]
    shown = ShownMemory(
        memory_id=d["memory_id"],
        text=d["value"],
        withheld=d["withheld"],
        key=d["key"],
        type=d["memory_type"],
        scope=d["scope"],
        created_at=d["created_at"],
        weight=d["weight"],
        label=d["epistemic_label"],
        version=_version(v),
    )
    state = v["state"] + (f", superseded by {v['superseded_by']}" if v["superseded_by"] else "")
    why = d["withheld"] and withheld_words(d["epistemic_label"], d["withheld"])
    said = shown_text(d) if not why else f"(text withheld as untrusted: {why})"
    return result(
        f"{said}\n[{d['memory_id']}] version {v['number']} of {v['of']} ({state}), "
        f"weight {d['weight']:.3f}, label: {label_words(d['epistemic_label'])}",
        shown,
    )


def read_line(problem: Exception) -> tuple[str, dict[str, Any] | None]:
    """What a line the SDK refused is: "not_json", "unreadable" (JSON to Python, not to the SDK's
    parser: a lone UTF-16 surrogate escape, which JavaScript's JSON.stringify writes for a string
    cut inside a pair, or NaN) or "json" (JSON, not a JSON-RPC message); and the request object it
    holds, if it is one (a JSON object with a method)."""
    import json

    from pydantic import ValidationError

    if not isinstance(problem, ValidationError):
        return "json", None
    kind, request = "json", None
    for e in problem.errors():
        raw = e.get("input")
        if e.get("type") == "json_invalid":
            try:
                raw = json.loads(raw) if isinstance(raw, str) else None
            except (ValueError, RecursionError):
                return "not_json", None
            kind = "unreadable" if raw is not None else "not_json"
        if request is None and isinstance(raw, dict) and "method" in raw:
            request = raw
    return kind, request


def protocol_error(problem: Exception) -> JSONRPCError:
    """The JSON-RPC answer to a line that is not a message: -32700 for text that is not JSON,
    -32600 for JSON that is not a JSON-RPC message. The id is null unless the line is a request
    whose id can be read: then the answer carries it, so the client's call fails at once instead
    of waiting for its timeout."""
    kind, request = read_line(problem)
    raw_id = request.get("id") if request is not None else None
    request_id = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    message = {
        "not_json": "Parse error: not JSON",
        "unreadable": "Parse error: JSON this server cannot read (a lone UTF-16 surrogate escape?)",
        "json": "Invalid request: not a JSON-RPC message",
    }[kind]
    code = INVALID_REQUEST if kind == "json" else PARSE_ERROR
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def stop_now(signum: int) -> None:
    """Leave on SIGINT (Ctrl-C; exit 130) or SIGTERM (exit 0) once the brain call in progress has
    finished (its transaction commits or rolls back whole); no call starts after the signal.

    The exit is immediate (os._exit): stdin is read by a worker thread blocked in readline, which
    nothing interrupts, so an orderly shutdown would wait for the client's next line (Ctrl-C in a
    terminal did nothing until Ctrl-D)."""
    STOPPING.set()
    BRAIN_CALLS.acquire(timeout=STOP_WAIT_SECONDS)
    interrupted = signum == signal.SIGINT
    if interrupted and sys.stderr.isatty():
        sys.stderr.write("aimos mcp: stopped\n")
    sys.stderr.flush()
    os._exit(130 if interrupted else 0)


async def stop_on_signal() -> None:
    import anyio

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            # its own thread limiter: the default one may be taken by calls waiting for the brain
            await anyio.to_thread.run_sync(stop_now, signum, limiter=anyio.CapacityLimiter(1))


async def serve_stdio(server: MCPServer) -> None:
    """Serve MCP on stdin/stdout. The SDK skips a line it cannot parse without a word; here the
    client gets a JSON-RPC error for it, and the server goes on reading. SIGINT and SIGTERM stop
    it once the call in progress has finished."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    from aimos.meaning.model import load_or_none

    # the model is kept for the server's life, loaded here before serving, on the main thread: loaded
    # in a thread beside the starting server, the process died now and then (1 start in 10 under
    # libfaketime, tests/mcp/test_mcp_expiry.py), with nothing on stderr
    load_or_none()
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
            if sys.platform != "win32" and threading.current_thread() is threading.main_thread():
                group.start_soon(stop_on_signal)
            group.start_soon(screen_lines)
            await lowlevel.run(receive, outgoing, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()  # end of input: stop watching for signals
    close_brain(server)


def wait_idle() -> None:
    """Until no call, and no call's work after its answer, holds the brain."""
    with BRAIN_CALLS:
        pass


def close_brain(server: MCPServer) -> None:
    """Once the last call's work is done: close the server's kept brain session."""
    with BRAIN_CALLS:
        if isinstance(server, ScreenedServer) and server.brains is not None:
            server.brains.close()
