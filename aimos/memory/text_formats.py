"""What `aimos import` reads, pure: a file's text in, the memories it holds out (no I/O, no brain).

Five shapes, each item naming the file and line it came from:
- markdown notes: one memory per note (or per heading with ``by_section``); the note's text is kept
  as written, links included; the front matter's ``key`` (else its ``title``, else the note's
  path), ``type``, ``scope``, ``clearance`` and ``data_class`` become the memory's own fields, and
  its other fields (tags, aliases, ...) a last line of the text, ``tags: home, heating``;
- JSON or JSONL memories: ``{text, key, type, scope, clearance, data_class, source, created, tags}``
  (``value`` and ``memory_type`` are accepted too); ``created`` (when the thing was written in the
  tool it comes from) is kept at the head of the text as ``[date]``, as conversation turns keep
  their time; ``tags`` (text or a list) a last line of the text, as a note's front matter; other
  fields are listed as not kept;
- aimos's own text export (JSONL or markdown, `aimos export --text`): a memory comes back with the
  same text, key, type, scope, source and ceilings, and its creation time (``created_at``, kept as
  the save's signed ``originated_at``; one that is no time is the memory's own refusal, not the
  file's); its label is read for the importer to judge (``label``), its id and a weight other
  than 1 are listed as not kept;
- a ChatGPT ``conversations.json`` and a Claude conversations export: each message a
  ``dialog_turn`` of its conversation (source ``import:chatgpt:ID`` / ``import:claude:ID``, key the
  conversation's title), ``[time] speaker: text`` as the LoCoMo import writes turns.

The formats `aimos import --format` names are registered once, at the end (``IMPORT_FORMATS``):
each with its name, a line for help, the file names ``auto`` reads as it, and its reader. A
malformed file raises ImportFormatError naming the file and line and the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain
from typing import Any

from aimos.errors import ImportFormatError

TEXT_EXPORT_FORMAT = "aimos-text-export/v1"
MARKDOWN_MARKER = "<!-- aimos-memory "  # a memory of the markdown text export starts at this line
MAX_SOURCE_CHARS = 200
MAX_KEY_CHARS = 500
CONVERSATION_TYPE = "dialog_turn"
# the formats `aimos import` reads, each named here once (the registry is IMPORT_FORMATS, at the end)
AUTO = "auto"  # --format's default: each file read as its name says (``by_name``)
MARKDOWN, JSON, JSONL, CHATGPT, CLAUDE = "markdown", "json", "jsonl", "chatgpt", "claude"


@dataclass
class Item:
    """One memory to save, and where it came from (``where``: FILE:LINE)."""

    value: str
    source: str
    where: str
    key: str | None = None
    memory_type: str = "note"
    scope: str | None = None
    clearance: int | None = None
    data_class: str | None = None
    label: str | None = None  # the label an aimos export says it carried (not signed here)
    originated: int | None = None  # when an aimos export says the memory was first made (Unix seconds)
    problem: str | None = None  # why this memory alone is left out, found as it was read


@dataclass
class Parsed:
    items: list[Item]
    format: str
    empty: int = 0  # notes or messages with no text
    not_kept: set[str] = field(default_factory=set)  # fields of the input no memory keeps


def _fail(name: str, line: int, problem: str, hint: str | None = None) -> ImportFormatError:
    return ImportFormatError(f"{name}:{line}: {problem}", f"{hint} Nothing was saved." if hint else None)


class _Lines:
    """Line numbers of offsets met in increasing order, counted once (not from the start each time)."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.offset:  # (a step back: counted from the start)
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _shown(value: Any, width: int = 40) -> str:
    """A value from the file, for an error message: cut short, and withheld when it holds a secret."""
    from aimos.memory.gates import find_secret

    text = repr(value)
    if isinstance(value, str) and find_secret(value) is not None:
        return "(a value that holds a secret, not shown)"
    return text if len(text) <= width else text[: width - 1] + "…"


def _loads(raw: str, name: str, line: int) -> Any:
    """json.loads, every way it can refuse a text a ImportFormatError naming the line."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise _fail(name, line + e.lineno - 1, f"not JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise _fail(name, line, "JSON nested too deeply") from None
    except ValueError as e:  # an integer of thousands of digits
        raise _fail(name, line, f"not JSON this aimos reads ({str(e)[:80]})") from None


# --- time stamps -----------------------------------------------------------------------------
ISO_HINT = "Use ISO 8601, e.g. 2024-05-01T14:03Z."


def _time(value: Any, field: str) -> tuple[datetime, bool]:
    """An ISO 8601 date, or date and time (one without a zone is UTC), or epoch seconds, in UTC,
    and whether it is a date alone; a ValueError (the problem, the fix or None) for anything else."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{field} must be a date or a time, not {_shown(value)}", None)
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, tz=UTC), False
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{field} {_shown(value)} is not a time", None) from None
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a date or a time, not {type(value).__name__}", None)
    text = value.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC), True
        except ValueError:
            raise ValueError(f"{field} {_shown(value)} is not a date", None) from None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{field} {_shown(value)} is not a date or time", ISO_HINT) from None
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC), False
    try:
        return when.astimezone(UTC), False
    except (OverflowError, ValueError):
        raise ValueError(f"{field} {_shown(value)} is not a time", None) from None


def stamp(value: Any, name: str, line: int) -> str:
    """``[YYYY-MM-DD]`` or ``[YYYY-MM-DD HH:MM]`` (UTC) of an ISO date/time or epoch seconds."""
    try:
        when, date_only = _time(value, "created")
    except ValueError as e:
        raise _fail(name, line, *e.args) from None
    return when.strftime("[%Y-%m-%d]" if date_only else "[%Y-%m-%d %H:%M]")


def instant(value: Any, field: str) -> int:
    """Unix seconds of an ISO date/time or epoch seconds (``_time``); ValueError(problem, fix)."""
    when, _ = _time(value, field)
    try:
        return math.floor(when.timestamp())
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{field} {_shown(value)} is not a time", None) from None


# --- fields shared by every shape ------------------------------------------------------------
def _text_field(obj: dict[str, Any], names: tuple[str, ...], name: str, line: int) -> str | None:
    for n in names:
        if n in obj and obj[n] is not None:
            value = obj[n]
            if not isinstance(value, str):
                raise _fail(name, line, f"{n} must be text, not {type(value).__name__}")
            return value
    return None


def _source(value: str, name: str, line: int) -> str:
    if not value.strip() or len(value) > MAX_SOURCE_CHARS or any(ord(c) < 32 for c in value):
        raise _fail(name, line, f"source must be one line of 1..{MAX_SOURCE_CHARS} characters")
    return value


def _fields(item: Item, obj: dict[str, Any], name: str, line: int) -> None:
    """key, type, scope, clearance and data_class from ``obj`` onto ``item``, checked."""
    key = _text_field(obj, ("key",), name, line)
    if key is not None:
        if len(key) > MAX_KEY_CHARS:
            raise _fail(name, line, f"key is over {MAX_KEY_CHARS} characters")
        item.key = key or None
    kind = _text_field(obj, ("type", "memory_type"), name, line)
    if kind is not None:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", kind):
            raise _fail(
                name,
                line,
                f"type {_shown(kind)} is not a memory type",
                "Use a word like note, fact, procedure.",
            )
        item.memory_type = kind
    item.scope = _text_field(obj, ("scope",), name, line) or None
    item.data_class = _text_field(obj, ("data_class",), name, line) or None
    for n in ("clearance", "clearance_level"):
        if obj.get(n) is not None:
            c = obj[n]
            if isinstance(c, str) and c.strip().isdecimal() and c.strip().isascii():
                c = int(c)
            if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c <= 12:
                raise _fail(name, line, f"{n} must be a whole number 0..12, not {_shown(obj[n])}")
            item.clearance = c


# --- JSON and JSONL ----------------------------------------------------------------------------
MEMORY_FIELDS = frozenset(
    {
        "text",
        "value",
        "key",
        "type",
        "memory_type",
        "scope",
        "clearance",
        "clearance_level",
        "data_class",
        "source",
        "created",
        "tags",
    }
)
EXPORT_READ = frozenset({"label", "weight", "created_at"})  # read from aimos's own export (memory_id is not)


def listed(value: Any) -> str:
    """A field's value as a line of text says it: a list's items joined with commas."""
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _tags(item: Item, tags: Any, name: str, line: int) -> None:
    """``tags`` (text, or a list of text) kept as the text's last line, as a note's front matter is."""
    if tags is None or tags in ("", []):
        return
    plain = (str, int, float)
    if not (
        isinstance(tags, str)
        or (isinstance(tags, list) and all(isinstance(t, plain) and not isinstance(t, bool) for t in tags))
    ):
        raise _fail(name, line, "tags must be text or a list of text", 'Give tags as ["home", "heating"].')
    item.value = f"{item.value}\n\ntags: {listed(tags)}"


def _exported(item: Item, obj: dict[str, Any], parsed: Parsed) -> None:
    """What aimos's own export adds to a memory: its label (for the importer to judge), its
    creation time (a memory whose time is no time is left out alone), a weight that is not kept."""
    label = obj.get("label")
    item.label = label if isinstance(label, str) else None
    if obj.get("created_at") is not None:
        try:
            item.originated = instant(obj["created_at"], "created_at")
        except ValueError as e:
            problem, fix = e.args
            item.problem = f"{problem}. {fix}" if fix else str(problem)
    if obj.get("weight", 1) != 1:
        parsed.not_kept.add("weight")


def _memory(obj: Any, name: str, line: int, parsed: Parsed, *, exported: bool) -> Item | None:
    if not isinstance(obj, dict):
        raise _fail(name, line, f"a memory must be a JSON object, not {type(obj).__name__}")
    text = _text_field(obj, ("text", "value"), name, line)
    if text is None:
        raise _fail(name, line, "this memory has no text", 'Give each memory a "text" field.')
    if not text.strip():
        parsed.empty += 1
        return None
    source = _text_field(obj, ("source",), name, line)
    item = Item(value=text, source=_source(source, name, line) if source else "", where=f"{name}:{line}")
    _fields(item, obj, name, line)
    if obj.get("created") is not None:
        item.value = f"{stamp(obj['created'], name, line)} {text}"
    _tags(item, obj.get("tags"), name, line)
    if exported:
        _exported(item, obj, parsed)
    parsed.not_kept |= set(obj) - MEMORY_FIELDS - (EXPORT_READ if exported else frozenset())
    return item


def parse_jsonl(text: str, name: str) -> Parsed:
    parsed = Parsed(items=[], format=JSONL)
    exported = False
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        obj = _loads(raw, name, number)
        if number == 1 and isinstance(obj, dict) and "format" in obj and "text" not in obj:
            exported = _export_header(obj, name, number)
            parsed.format = "aimos-export-jsonl"
            continue
        item = _memory(obj, name, number, parsed, exported=exported)
        if item is not None:
            parsed.items.append(item)
    return parsed


def _export_header(obj: dict[str, Any], name: str, line: int) -> bool:
    if obj.get("format") != TEXT_EXPORT_FORMAT:
        raise _fail(
            name,
            line,
            f"unknown format {_shown(obj.get('format'))}",
            f"This aimos reads {TEXT_EXPORT_FORMAT}.",
        )
    return True


JSON_SPACE = re.compile(r"[ \t\r\n]*")  # what JSON allows between its tokens
SPACE = re.compile(r"\s*")


def _array_elements(text: str, name: str) -> Iterator[tuple[Any, int]]:
    """The elements of a top-level JSON array, each with the line it starts on, one at a time
    (a file is refused at its first bad element, before the rest is parsed)."""
    decoder = json.JSONDecoder()
    lines = _Lines(text)
    i = _space(SPACE, text, 0)
    if not text.startswith("[", i):
        raise _fail(name, lines.at(i), "expected a JSON array")
    i = _space(JSON_SPACE, text, i + 1)
    while not text.startswith("]", i):
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise _fail(name, e.lineno, f"not JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:
            raise _fail(name, lines.at(i), "JSON nested too deeply") from None
        except ValueError as e:  # an integer of thousands of digits
            raise _fail(name, lines.at(i), f"not JSON this aimos reads ({str(e)[:80]})") from None
        yield obj, lines.at(i)
        i = _space(JSON_SPACE, text, end)
        if text.startswith(",", i):
            i = _space(JSON_SPACE, text, i + 1)
        elif not text.startswith("]", i):
            raise _fail(name, lines.at(i), "expected , or ] after an element of the array")
    if _space(SPACE, text, i + 1) < len(text):
        raise _fail(name, lines.at(i + 1), "text after the end of the JSON array")


def _space(space: re.Pattern[str], text: str, i: int) -> int:
    """Where the run of ``space`` from ``i`` ends (no copy of the text: it may be hundreds of MB)."""
    found = space.match(text, i)
    return found.end() if found else i


def parse_json(text: str, name: str) -> Parsed:
    """A JSON file: a ChatGPT or Claude export, a list of memories, or {"memories": [...]}."""
    if text.startswith("{", _space(SPACE, text, 0)):
        doc = _loads(text, name, 1)
        if not isinstance(doc.get("memories"), list):
            raise _fail(name, 1, 'expected a list of memories, or an object with a "memories" list')
        parsed = Parsed(items=[], format=JSON)
        exported = "format" in doc and _export_header(doc, name, 1)
        for number, obj in enumerate(doc["memories"], 1):
            item = _memory(obj, name, 1, parsed, exported=exported)
            if item is not None:
                item.where = f"{name} memory {number}"
                parsed.items.append(item)
        return parsed
    elements = _array_elements(text, name)
    head = next(elements, None)
    rest = chain([head] if head else [], elements)  # the export's shape is its first element's
    first = head[0] if head and isinstance(head[0], dict) else {}
    for export in IMPORT_FORMATS:
        if export.sniff is not None and export.conversations is not None and export.sniff in first:
            return export.conversations(rest, name)
    parsed = Parsed(items=[], format=JSON)
    for obj, line in rest:
        item = _memory(obj, name, line, parsed, exported=False)
        if item is not None:
            parsed.items.append(item)
    return parsed


# --- conversation exports -----------------------------------------------------------------------
def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _turn(parsed: Parsed, *, when: str, speaker: str, text: str, conv: str, title: str, where: str) -> None:
    if not text.strip():
        parsed.empty += 1
        return
    value = f"{when} {speaker}: {text}" if when else f"{speaker}: {text}"
    parsed.items.append(
        Item(
            value=value,
            source=conv,
            where=where,
            key=title[:MAX_KEY_CHARS] or None,
            memory_type=CONVERSATION_TYPE,
        )
    )


def _conversation_id(obj: dict[str, Any], names: tuple[str, ...], name: str, line: int) -> str:
    for n in names:
        if isinstance(obj.get(n), str) and obj[n].strip():
            return re.sub(r"[\x00-\x1f]", "", obj[n])[:100]
    raise _fail(name, line, f"this conversation has no {names[0]}")


def _chatgpt(elements: Iterable[tuple[Any, int]], name: str) -> Parsed:
    """ChatGPT's conversations.json: each conversation's current thread, from the root down."""
    parsed = Parsed(items=[], format=CHATGPT)
    for conv, line in elements:
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise _fail(
                name, line, "this conversation has no mapping (is this ChatGPT's conversations.json?)"
            )
        cid = _conversation_id(conv, ("conversation_id", "id"), name, line)
        title = _str(conv.get("title"))
        mapping = conv["mapping"]
        node = conv.get("current_node")
        if (
            not isinstance(node, str) or node not in mapping
        ):  # no current node: the last node with no children
            leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
            node = leaves[-1] if leaves else None
        thread: list[dict[str, Any]] = []
        seen: set[str] = set()
        while isinstance(node, str) and node not in seen:
            seen.add(node)
            entry = mapping.get(node)
            if not isinstance(entry, dict):
                raise _fail(
                    name, line, f"conversation {cid}: node {_shown(node)} is missing from its mapping"
                )
            if isinstance(entry.get("message"), dict):
                thread.append(entry["message"])
            node = entry.get("parent")
        for number, message in enumerate(reversed(thread), 1):
            author = message.get("author")
            role = author.get("role") if isinstance(author, dict) else None
            if role not in ("user", "assistant"):
                continue  # system prompts and tool calls are not the conversation
            content = message.get("content") or {}
            parts = content.get("parts") if isinstance(content, dict) else None
            text = "\n".join(p for p in parts or [] if isinstance(p, str)) if isinstance(parts, list) else ""
            if not text and isinstance(content, dict) and isinstance(content.get("text"), str):
                text = content["text"]
            t = message.get("create_time") or conv.get("create_time")
            when = stamp(t, name, line) if isinstance(t, int | float) else ""
            speaker = "user" if role == "user" else "ChatGPT"
            _turn(
                parsed,
                when=when,
                speaker=speaker,
                text=text,
                conv=f"import:{CHATGPT}:{cid}",
                title=title,
                where=f"{name}:{line} message {number}",
            )
    return parsed


def _claude(elements: Iterable[tuple[Any, int]], name: str) -> Parsed:
    """Claude's conversations export: each conversation's chat_messages in order."""
    parsed = Parsed(items=[], format=CLAUDE)
    for conv, line in elements:
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise _fail(name, line, "this conversation has no chat_messages (is this Claude's export?)")
        cid = _conversation_id(conv, ("uuid", "id"), name, line)
        title = _str(conv.get("name"))
        for number, message in enumerate(conv["chat_messages"], 1):
            if not isinstance(message, dict):
                raise _fail(name, line, f"conversation {cid}: message {number} is not an object")
            sender = message.get("sender")
            if sender not in ("human", "assistant"):
                continue
            text = _str(message.get("text"))
            if not text and isinstance(message.get("content"), list):
                text = "\n".join(
                    c["text"]
                    for c in message["content"]
                    if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
                )
            t = message.get("created_at")
            when = stamp(t, name, line) if t else ""
            _turn(
                parsed,
                when=when,
                speaker="user" if sender == "human" else "Claude",
                text=text,
                conv=f"import:{CLAUDE}:{cid}",
                title=title,
                where=f"{name}:{line} message {number}",
            )
    return parsed


# --- markdown ---------------------------------------------------------------------------------
def front_matter(text: str, name: str) -> tuple[dict[str, Any], int]:
    """A note's YAML front matter as notes write it (``name: value``, names with spaces, ``[a, b]``
    and ``- item`` lists; an indented line, a block scalar's or a nested map's, continues the field
    above as text) and the line its body starts on (1 when it has none)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, 1
    fields: dict[str, Any] = {}
    current: str | None = None
    for number, raw in enumerate(lines[1:], 2):
        stripped = raw.strip()
        if stripped in ("---", "..."):
            return fields, number + 1
        if not stripped or stripped.startswith("#"):
            continue
        indented = raw[:1] in (" ", "\t")
        if stripped.startswith("- ") and current is not None and (indented or raw[:1] == "-"):
            if fields[current] in ([], ""):
                fields[current] = []
            if isinstance(fields[current], list):
                fields[current].append(_scalar(stripped[2:]))
                continue
        if indented and current is not None:  # a block scalar's line, a nested field: kept as text
            before = fields[current]
            joined = ", ".join(map(str, before)) if isinstance(before, list) else str(before)
            fields[current] = f"{joined} {stripped}".strip()
            continue
        m = re.fullmatch(r"([^\s:#\-][^:]{0,79}?)\s*:(?:\s+(.*))?", stripped)
        if m is None or indented:
            raise _fail(
                name, number, "front matter line is not `name: value`", "Fix the note's front matter."
            )
        current, rest = m.group(1), (m.group(2) or "").strip()
        if rest in (">", "|", ">-", "|-", ">+", "|+"):
            fields[current] = ""
        elif rest.startswith("[") and rest.endswith("]"):
            fields[current] = [_scalar(p) for p in rest[1:-1].split(",") if p.strip()]
        elif rest:
            fields[current] = _scalar(rest)
        else:
            fields[current] = []
    raise _fail(name, 1, "front matter opened with --- is never closed", "End it with a line of ---.")


def _scalar(raw: str) -> Any:
    s = raw.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    if re.fullmatch(r"-?[0-9]{1,18}", s):
        return int(s)
    return s


HEADING = re.compile(r"(#{1,2})\s+(.+?)\s*#*\s*$")


def _sections(body_lines: list[str], first_line: int) -> list[tuple[str | None, int, list[str]]]:
    """The body split at level-1 and level-2 headings outside fenced code: (heading, line, lines)."""
    sections: list[tuple[str | None, int, list[str]]] = [(None, first_line, [])]
    fenced = False
    for offset, raw in enumerate(body_lines):
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else HEADING.fullmatch(raw)
        if m:
            sections.append((m.group(2), first_line + offset, [raw]))
        else:
            sections[-1][2].append(raw)
    return sections


def parse_markdown(
    text: str, name: str, source: str, default_key: str, *, by_section: bool = False
) -> Parsed:
    """One note (``name`` its path as shown, ``source`` its provenance, ``default_key`` its key
    when the front matter names none)."""
    parsed = Parsed(items=[], format=MARKDOWN)
    text = text.removeprefix("\ufeff")
    if text.startswith(f"---\nformat: {TEXT_EXPORT_FORMAT}"):
        return parse_markdown_export(text, name)
    fields, body_start = front_matter(text, name)
    lines = text.split("\n")
    base = Item(value="", source=source, where=f"{name}:1", key=default_key)
    mapped = ("key", "type", "scope", "clearance", "data_class")
    if "key" not in fields and isinstance(fields.get("title"), str | int):
        fields = {"key": fields["title"], **{k: v for k, v in fields.items() if k != "title"}}
    for k in mapped:  # a field that fits the memory's own becomes it; one that does not stays text
        v = fields.get(k)
        if v is None or v in ([], "") or isinstance(v, list):
            continue
        try:
            _fields(base, {k: v if k == "clearance" else str(v)}, name, 1)
        except ImportFormatError:
            continue
        del fields[k]
    trailer = "; ".join(f"{k}: {listed(v)}" for k, v in fields.items() if v not in ([], ""))
    sections = (
        _sections(lines[body_start - 1 :], body_start)
        if by_section
        else [(None, body_start, lines[body_start - 1 :])]
    )
    for heading, line, section in sections:
        body = "\n".join(section).strip("\n")
        if not "\n".join(section[1:] if heading is not None else section).strip():
            continue  # an empty note, a heading with nothing under it, blank lines before the first
        value = f"{body}\n\n{trailer}" if trailer else body
        key = f"{base.key} > {heading}" if heading and base.key else (heading or base.key)
        parsed.items.append(_with(base, value, f"{name}:{line}", key))
    if not parsed.items:
        parsed.empty += 1
    return parsed


def _with(base: Item, value: str, where: str, key: str | None) -> Item:
    return Item(
        value=value,
        source=base.source,
        where=where,
        key=key,
        memory_type=base.memory_type,
        scope=base.scope,
        clearance=base.clearance,
        data_class=base.data_class,
    )


def _marker(text: str, start: int) -> int:
    """Where the next memory's marker line starts (at the start of a line), or -1."""
    at = text.find("\n" + MARKDOWN_MARKER, max(start - 1, 0))
    return at + 1 if at >= 0 else -1


def parse_markdown_export(text: str, name: str) -> Parsed:
    """aimos's markdown text export: after its front matter and an introduction, each memory is a
    marker line holding its fields as JSON (with its text's length) followed by exactly that text."""
    parsed = Parsed(items=[], format="aimos-export-markdown")
    fields, _ = front_matter(text, name)
    _export_header(fields, name, 2)
    lines = _Lines(text)
    offset = _marker(text, 0)
    while offset >= 0:
        line = lines.at(offset)
        end = text.find(" -->\n", offset)
        if end < 0:
            raise _fail(name, line, "the memory's marker line does not end with -->")
        try:
            meta = json.loads(text[offset + len(MARKDOWN_MARKER) : end])
            chars = meta.pop("chars")
        except (ValueError, RecursionError, KeyError, AttributeError, TypeError):
            raise _fail(
                name, line, "the memory's marker does not hold its fields as JSON with chars"
            ) from None
        body_at = end + len(" -->\n")
        if not isinstance(chars, int) or chars < 0 or body_at + chars > len(text):
            raise _fail(name, line, "the memory's length runs past the end of the file")
        meta["text"] = text[body_at : body_at + chars]
        item = _memory(meta, name, line, parsed, exported=True)
        if item is not None:
            parsed.items.append(item)
        offset = body_at + chars
        after = _marker(text, offset)
        between = text[offset : after if after >= 0 else len(text)]
        if between.strip():
            raise _fail(
                name, lines.at(offset + len(between) - len(between.lstrip())), "text outside a memory"
            )
        offset = after
    return parsed


# --- aimos's text export ------------------------------------------------------------------------
EXPORT_WARNING = "plain text: every memory's text, as readable as the brain itself; keep it private"


def export_record(memory: dict[str, Any], created_at: str) -> dict[str, Any]:
    """One current memory as the text export writes it (``created_at``: when it was first made,
    which an import keeps as its save's signed originated_at)."""
    return {
        "text": memory["value"],
        "key": memory["key"],
        "type": memory["memory_type"],
        "scope": memory["scope"],
        "clearance": memory["clearance_level"],
        "data_class": memory["data_class"],
        "source": memory["source"],
        "label": memory["epistemic_label"],
        "weight": memory["retrieval_weight_milli"] / 1000,
        "created_at": created_at,
        "memory_id": memory["memory_id"],
    }


def _header(records: list[dict[str, Any]], exported_at: str) -> dict[str, Any]:
    return {
        "format": TEXT_EXPORT_FORMAT,
        "exported_at": exported_at,
        "memories": len(records),
        "warning": EXPORT_WARNING,
    }


def to_jsonl(records: list[dict[str, Any]], exported_at: str) -> str:
    """A header line, then one memory per line (oldest first: conversations keep their order)."""
    lines = [json.dumps(_header(records, exported_at), ensure_ascii=False)]
    lines += [json.dumps(r, ensure_ascii=False) for r in records]
    return "\n".join(lines) + "\n"


def to_markdown(records: list[dict[str, Any]], exported_at: str) -> str:
    """Front matter, a line for people, then each memory: its marker line and its exact text."""
    out = [
        "---",
        *(f"{k}: {v}" for k, v in _header(records, exported_at).items()),
        "---",
        "# aimos memories",
        "",
        "Each memory below starts at a line holding its fields as an HTML comment (aimos-memory); its text",
        "follows exactly as saved. `aimos import` reads this file back.",
        "",
    ]
    for r in records:
        meta = {k: v for k, v in r.items() if k != "text"}
        meta["chars"] = len(r["text"])
        out.append(f"{MARKDOWN_MARKER}{json.dumps(meta, ensure_ascii=False)} -->\n{r['text']}\n")
    return "\n".join(out)


# --- the import formats, each once ---------------------------------------------------------------
# a reader: the file's text, its name as shown, its key when it names none, one memory per heading
Reader = Callable[[str, str, str, bool], Parsed]
Conversations = Callable[[Iterable[tuple[Any, int]], str], Parsed]
ZIPPED = ".zip"  # a chat export as delivered: the zip's conversations.json is read


@dataclass(frozen=True)
class ImportFormat:
    """A format `aimos import --format` names: ``description`` a line for help; ``suffixes`` the
    file names (lower case) ``auto`` reads as it; ``sniff`` the field the first element of a JSON
    array has when the array is this export's conversations (read by ``conversations``); ``folder``
    whether a folder's notes are read as it."""

    name: str
    description: str
    read: Reader
    suffixes: tuple[str, ...] = ()
    sniff: str | None = None
    conversations: Conversations | None = None
    folder: bool = False


def _sourced(parsed: Parsed, name: str) -> Parsed:
    """A JSON memory that names no source gets its file's (``import:FORMAT:FILE``)."""
    for item in parsed.items:
        item.source = item.source or f"import:{parsed.format}:{name}"
    return parsed


def _read_markdown(text: str, name: str, key: str, by_section: bool) -> Parsed:
    return parse_markdown(text, name, f"import:{MARKDOWN}:{name}", key, by_section=by_section)


def _read_json(text: str, name: str, key: str, by_section: bool) -> Parsed:
    return _sourced(parse_json(text, name), name)


def _read_jsonl(text: str, name: str, key: str, by_section: bool) -> Parsed:
    return _sourced(parse_jsonl(text, name), name)


def _export_reader(export: str) -> Reader:
    """A reader of JSON that must be ``export``'s conversations: anything else is refused as not it."""

    def read(text: str, name: str, key: str, by_section: bool) -> Parsed:
        not_it = ImportFormatError(
            f"{name}: this is not a {export} export",
            "Leave out --format, or name the file that export wrote (conversations.json). Nothing was saved.",
        )
        try:
            parsed = parse_json(text, name)
        except ImportFormatError as e:
            not_it.message = f"{not_it.message} ({e.message})"
            raise not_it from None
        if parsed.format != export:
            raise not_it
        return _sourced(parsed, name)

    return read


IMPORT_FORMATS = (
    ImportFormat(
        MARKDOWN,
        "markdown notes: one memory per note (or per heading), the front matter its fields",
        _read_markdown,
        suffixes=(".md", ".markdown"),
        folder=True,
    ),
    ImportFormat(
        JSON,
        'a JSON list of memories (or {"memories": [...]}), or a chat export found by its shape',
        _read_json,
        suffixes=(".json", ZIPPED),
    ),
    ImportFormat(JSONL, "one JSON memory per line", _read_jsonl, suffixes=(".jsonl", ".ndjson")),
    ImportFormat(
        CHATGPT,
        "ChatGPT's conversations.json: each message of a conversation's current thread",
        _export_reader(CHATGPT),
        sniff="mapping",
        conversations=_chatgpt,
    ),
    ImportFormat(
        CLAUDE,
        "Claude's conversations export: each of a conversation's chat_messages",
        _export_reader(CLAUDE),
        sniff="chat_messages",
        conversations=_claude,
    ),
)
IMPORT_FORMAT = {f.name: f for f in IMPORT_FORMATS}
FORMAT_NAMES = (AUTO, *IMPORT_FORMAT)  # what --format takes
FOLDER_FORMAT = next(f for f in IMPORT_FORMATS if f.folder)
AUTO_DESCRIPTION = "by the name: a folder or .md is markdown, .jsonl, .json or a .zip export"
# the formats as a sentence says them: "markdown, json, jsonl, chatgpt or claude"
FORMATS_IN_WORDS = f"{', '.join(FORMAT_NAMES[1:-1])} or {FORMAT_NAMES[-1]}"


def by_name(suffix: str) -> ImportFormat | None:
    """The format ``auto`` reads a file whose name ends in ``suffix`` (lower case) as, or None."""
    return next((f for f in IMPORT_FORMATS if suffix in f.suffixes), None)
