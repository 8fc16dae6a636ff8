"""Secret shapes with a checksum of their own (pure, no I/O but the word lists a package ships): an
IBAN (mod 97 and its country's length), a Bitcoin private key in WIF and an extended private key
(base58check), and a wallet recovery phrase (BIP-39 words, and their checksum).

The checksum is what tells these from ordinary text: a run of 22 letters and digits is rarely an
IBAN, and 1 in 97 of them passes; twelve words of the BIP-39 list in a row are rare in prose (7 at
most in the 6,702 ordinary texts of `aimos eval secrets`), and 1 in 16 of them passes.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import importlib.util
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path

from aimos.memory.secret_forms import Finding, lazy
from aimos.memory.secret_words import around, finditer_near, near

# ---------------------------------------------------------------------------------------------
# IBAN

# the length of an IBAN in each country that issues them (ISO 13616 registry)
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
    "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
_IBAN = lazy(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{4}){2,7}(?:[ -]?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])"
)


def iban_valid(iban: str) -> bool:
    """The country's length and the mod-97 check (ISO 7064) of a compact, upper-case IBAN."""
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban.isalnum():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


# A UUID (8-4-4-4-12 hex digits): its last groups can read as a dashed IBAN that passes mod 97
# (about 1 UUID in 10,000: "...-be39-95bce90314c5" is a Belgian one), but it is an id, and ids are
# everywhere in what agents save (a correction names the memory it supersedes by one).
# Lower case only, as ids are written (str(uuid.uuid4())): a real IBAN is written in capitals, so one
# dressed in a UUID's capital groups ("...-BE68-539007547034") is still found.
_UUID = lazy(r"(?<![0-9A-Za-z])[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}(?![0-9A-Za-z])")


def iban_findings(text: str) -> Iterator[Finding]:
    """Each IBAN of ``text``: its country's length of characters from a match of the shape, ending
    where a group ends (the shape may also take in the word that follows, as in "... 0743 today"),
    with its check digits right; none inside a UUID."""
    uuids = [(u.start(), u.end()) for u in _UUID().finditer(text)] if "-" in text else []
    for m in _IBAN().finditer(text):
        raw = m.group(0)
        length = IBAN_LENGTHS.get(raw[:2].upper())
        kept = [i for i, c in enumerate(raw) if c not in " -"]
        if length is None or len(kept) < length:
            continue
        end = kept[length - 1] + 1
        if end < len(raw) and raw[end] not in " -":
            continue  # the country's length ends inside a group: not an IBAN written out
        start, stop = m.start(), m.start() + end
        if any(low <= start and stop <= high for low, high in uuids):
            continue
        if iban_valid("".join(raw[i] for i in kept[:length]).upper()):
            yield Finding("bank account number (IBAN)", start, stop)


# ---------------------------------------------------------------------------------------------
# Bitcoin private keys: WIF and extended private keys (base58check)

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(B58)}
_WIF = lazy(r"(?<![1-9A-Za-z])[5KLc9][1-9A-HJ-NP-Za-km-z]{50,51}(?![1-9A-Za-z])")
_XPRV = lazy(r"(?<![1-9A-Za-z])[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{100,108}(?![1-9A-Za-z])")
_WALLET_WORDS = lazy(
    r"(?i)\bwif\b|private\s*key|privkey|secret\s*key|wallet|bitcoin|\bbtc\b|sweep|import|solana|phantom"
)
# 64 bytes in base58 (a Solana keypair), told as a key: base58 has no checksum of its own
_B58_KEYPAIR = lazy(r"(?<![1-9A-Za-z])[1-9A-HJ-NP-Za-km-z]{86,90}(?![1-9A-Za-z])")


def b58check(text: str) -> bytes | None:
    """The payload of a base58check string whose 4-byte double-SHA256 checksum holds, or None."""
    number = 0
    for ch in text:
        number = number * 58 + _B58_INDEX[ch]
    zeros = len(text) - len(text.lstrip("1"))
    raw = b"\0" * zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")
    payload, check = raw[:-4], raw[-4:]
    return payload if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check else None


def wif_key(payload: bytes) -> bool:
    """Version 0x80 (mainnet) or 0xEF (testnet), 32 bytes of key, 0x01 after them if compressed."""
    if payload[:1] not in (b"\x80", b"\xef"):
        return False
    return len(payload) == 33 or (len(payload) == 34 and payload[-1] == 1)


def wallet_key_findings(text: str) -> Iterator[Finding]:
    for m in _WIF().finditer(text):
        payload = b58check(m.group(0))
        if (payload is not None and wif_key(payload)) or _WALLET_WORDS().search(
            around(text, m.start(), m.end())
        ):
            yield Finding("Bitcoin private key (WIF)", m.start(), m.end())
    for m in _XPRV().finditer(text):
        yield Finding("wallet extended private key (xprv)", m.start(), m.end())
    for m in _B58_KEYPAIR().finditer(text):
        if _WALLET_WORDS().search(around(text, m.start(), m.end())):
            yield Finding("wallet private key (base58)", m.start(), m.end())


# ---------------------------------------------------------------------------------------------
# wallet recovery phrases (BIP-39)

SEED = "wallet recovery phrase (seed words)"
# the word lists the `mnemonic` package ships: those in Latin letters (English first: a run of English
# words needs no cue), then those in other scripts, read only for a text that has letters of them
LATIN_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish")
LANGUAGES = (*LATIN_LANGUAGES, "japanese", "korean", "chinese_simplified", "chinese_traditional", "russian")
_OTHER_SCRIPTS = lazy(r"[\u0400-\u04ff\u1100-\u11ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
SEED_LENGTHS = (24, 21, 18, 15, 12)
# a word: letters, and the combining marks of a decomposed one (the lists are NFKD: "a\u0301guila")
_TOKEN = lazy(r"[^\W\d_](?:[^\W\d_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u3099\u309a])*")
_ASCII_WORD = lazy(r"[A-Za-z]+")
# between two words of a phrase: spaces, commas, line breaks and numbering ("1. abandon 2) ability")
_GAP = lazy(r"(?:[\s,;|·•/()\[\]#:.–\"'-]|\d{1,2}(?!\d)){1,12}")
_SEED_CUE = lazy(
    r"(?i)\b(?:seed|mnemonic|recovery|backup|secret|wallet)[ -]?(?:phrase|words?|sentence|key)\b|"
    r"\bmnemonic\b|"
    r"\b(?:metamask|trezor|electrum|monero|ledger\s+(?:nano|live))\b|助记词|助記詞|ニーモニック|"
    r"복구\s?(?:구문|문구)|frase\s+(?:semilla|de\s+recuperaci[oó]n|secreta)|phrase\s+de\s+r[ée]cup[ée]ration|"
    r"wiederherstellungs|seed-?phrase|сид[- ]?фраз|мнемони|kurtarma|herstelzin"
)
_CUE_HINTS = (
    "seed", "mnemonic", "recovery", "backup", "secret", "wallet", "metamask", "ledger", "trezor",
    "electrum", "monero", "助记", "助記", "ニーモニック", "복구", "frase", "phrase",
    "wiederherstellung", "сид", "мнемони", "kurtarma", "herstel",
)  # fmt: skip
# words prose is made of and no list holds: a run of words after a cue without them is a phrase
_PROSE = frozenset(
    """the and of to in is are was were be been it its my your our for with from by as at on or an but
    not so if we he she his her them their me do does did has had should would could into than then
    because which who whom how why very just only i'm it's don't""".split()
)


def fold(word: str) -> str:
    """A word as the lists are looked up: lower case, decomposed, without its accents."""
    if word.isascii():
        return word.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


@functools.cache
def wordlist(language: str) -> tuple[str, ...]:
    """The 2,048 BIP-39 words of ``language``, as the `mnemonic` package ships them (read on
    first use; the package itself is not imported)."""
    spec = importlib.util.find_spec("mnemonic")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not folders:
        raise ModuleNotFoundError("the secret gate reads the BIP-39 word lists of the 'mnemonic' package")
    return tuple((Path(folders[0]) / "wordlist" / f"{language}.txt").read_text("utf-8").split())


Lists = tuple[dict[str, int], tuple[dict[str, int], ...]]


@functools.cache
def wordlists(other_scripts: bool = False) -> Lists:
    """(word -> bit mask of the lists holding it, each list's word -> index), of the lists in
    Latin letters, or of them all."""
    masks: dict[str, int] = {}
    indexes = []
    for bit, language in enumerate(LANGUAGES if other_scripts else LATIN_LANGUAGES):
        index = {fold(w): i for i, w in enumerate(wordlist(language))}
        indexes.append(index)
        for word in index:
            masks[word] = masks.get(word, 0) | 1 << bit
    return masks, tuple(indexes)


def bip39_checksum(indexes: Sequence[int]) -> bool:
    """The last bits of a phrase are the first bits of the SHA-256 of the rest (BIP-39)."""
    bits = len(indexes) * 11
    checksum_bits = bits // 33
    number = 0
    for i in indexes:
        number = number << 11 | i
    entropy_bits = bits - checksum_bits
    entropy = (number >> checksum_bits).to_bytes(entropy_bits // 8, "big")
    expected = hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits)
    return number & ((1 << checksum_bits) - 1) == expected


def _checksum_holds(words: list[str], mask: int, indexes: tuple[dict[str, int], ...]) -> bool:
    for bit in range(len(indexes)):
        if not mask & 1 << bit:
            continue
        numbers = [indexes[bit][w] for w in words[:48]]
        for size in SEED_LENGTHS:
            for at in range(len(numbers) - size + 1):
                if bip39_checksum(numbers[at : at + size]):
                    return True
    return False


def _runs(text: str, tokens: list[re.Match[str]], masks: dict[str, int]) -> Iterator[tuple[int, int, int]]:
    """(first token, token after the last, mask) of each run of 12 or more words of one list."""
    first, mask = 0, 0
    for i, token in enumerate(tokens):
        word_mask = masks.get(fold(token.group(0)), 0)
        if mask & word_mask and _GAP().fullmatch(text, tokens[i - 1].end(), token.start()) is not None:
            mask &= word_mask
            continue
        if i - first >= 12 and mask:
            yield first, i, mask
        first, mask = i, word_mask
    if len(tokens) - first >= 12 and mask:
        yield first, len(tokens), mask


def _is_phrase(text: str, words: list[str], mask: int, lists: Lists, span: tuple[int, int]) -> bool:
    if _checksum_holds(words, mask, lists[1]):
        return True
    if mask & 1 and len(set(words)) >= 12:
        return True  # twelve different English list words in a row
    return bool(_SEED_CUE().search(around(text, span[0], span[1], 100, 0)))


def _prose_free(word: str) -> bool:
    return word.islower() and 3 <= len(word) <= 12 and word not in _PROSE


def _cued_phrase(text: str) -> Iterator[Finding]:
    """Within 30 characters after a cue ("seed phrase:", "mnemonic"), 12 or more lower-case words
    with no word of prose among them: a phrase of a list we do not hold (Monero's, Electrum's, one
    with a misspelt word)."""
    cues = list(finditer_near(_SEED_CUE, text, near(text, _CUE_HINTS, 30, 30)))
    tokens = list(_TOKEN().finditer(text)) if cues else []
    starts = [t.start() for t in tokens]
    for cue in cues:
        run: list[re.Match[str]] = []
        for token in itertools.islice(tokens, bisect.bisect_left(starts, cue.end()), None):
            word_ok = _prose_free(token.group(0))
            if word_ok and run and _GAP().fullmatch(text, run[-1].end(), token.start()) is not None:
                run.append(token)
                continue
            if len(run) >= 12 or token.start() > cue.end() + 30:
                break
            run = [token] if word_ok else []
        if len(run) >= 12:
            yield Finding(SEED, run[0].start(), run[-1].end())


def _long_run(hits: list[int]) -> bool:
    """Twelve list words in a row, by the words alone (separators not looked at)."""
    run = 0
    for hit in hits:
        run = run + 1 if hit else 0
        if run >= 12:
            return True
    return False


def seed_phrase_findings(text: str) -> Iterator[Finding]:
    words = (_ASCII_WORD if text.isascii() else _TOKEN)().findall(text)
    if len(words) < 12:
        return
    lists = wordlists(not text.isascii() and _OTHER_SCRIPTS().search(text) is not None)
    masks = lists[0]
    found = False
    if _long_run([masks.get(w.lower() if w.isascii() else fold(w), 0) for w in words]):
        tokens = list(_TOKEN().finditer(text))
        for first, after, mask in _runs(text, tokens, masks):
            span = tokens[first].start(), tokens[after - 1].end()
            if _is_phrase(text, [fold(t.group(0)) for t in tokens[first:after]], mask, lists, span):
                found = True
                yield Finding(SEED, *span)
    if not found:
        yield from _cued_phrase(text)
