"""Unit tests of the crypto kernel's refusals and edge cases: canonical JSON, encodings, Ed25519
keys, certificates and signed-message forms. Every refusal is checked by its machine ``reason``."""

from __future__ import annotations

import base64
import decimal
import hashlib
import json
import math
from datetime import datetime
from typing import Any

import pytest

from aimos.crypto import messages
from aimos.crypto.canonical import (
    MAX_SAFE_INTEGER,
    canonical_json,
    canonical_sha256,
    canonical_sha256_hex,
    canonical_text,
)
from aimos.crypto.certs import (
    Certificate,
    cert_fingerprint,
    issue_certificate,
    parse_certificate,
    verify_certificate,
)
from aimos.crypto.ed25519 import (
    SPKI_PREFIX,
    KeyPair,
    fingerprint_of_b64u,
    public_key_b64u,
    raw_from_spki,
    spki_der,
    verify,
)
from aimos.crypto.encoding import (
    b64u_decode,
    b64u_encode,
    be32,
    be64,
    float4_be,
    framed,
    hex32,
    is_hex64,
    iso_ms,
    parse_iso_ms,
    u16,
    u32,
    u64,
    uuid16,
)
from aimos.errors import CanonicalJSONError, EncodingError, SignatureError, UsageError
from aimos.vocabulary import CANONICAL_JSON_MAX_DEPTH as MAX_DEPTH
from aimos.vocabulary import MASTER_ISSUER

MASTER = KeyPair(hashlib.sha256(b"aimos-unit-test:master").digest())
AGENT = KeyPair(hashlib.sha256(b"aimos-unit-test:agent").digest())
OTHER = KeyPair(hashlib.sha256(b"aimos-unit-test:other").digest())
T0 = 1786387794  # 2026-08-10T18:49:54Z


def nested_lists(lists: int, innermost: Any) -> Any:
    value = innermost
    for _ in range(lists):
        value = [value]
    return value


def nested_objects(objects: int, innermost: Any) -> Any:
    value = innermost
    for _ in range(objects):
        value = {"k": value}
    return value


def refusal(value: Any) -> str | None:
    with pytest.raises(CanonicalJSONError) as err:
        canonical_json(value)
    return err.value.reason


# --- canonical JSON: depth ------------------------------------------------------------------------
# The root is at depth 0 and every value (container or scalar) one level inside another is one
# deeper; any value deeper than 32 is refused. So 32 lists around a scalar put the scalar at
# depth 32 (accepted) and 33 lists put it at 33 (refused); an empty innermost container is itself a
# value, so 33 lists whose innermost is empty (that list at depth 32) are accepted and 34 are not.
def test_depth_limit_constant() -> None:
    assert MAX_DEPTH == 32


@pytest.mark.parametrize("wrap", [nested_lists, nested_objects])
def test_scalar_at_depth_32_passes_and_33_fails(wrap: Any) -> None:
    assert canonical_json(wrap(32, 0)).count(b"0") == 1
    assert refusal(wrap(33, 0)) == "canonical_json_depth_limit"


@pytest.mark.parametrize(("innermost", "text"), [([], b"[]"), ({}, b"{}")])
def test_empty_container_at_depth_32_passes_and_33_fails(innermost: Any, text: bytes) -> None:
    accepted = canonical_json(nested_lists(32, innermost))
    assert accepted == b"[" * 32 + text + b"]" * 32
    assert refusal(nested_lists(33, innermost)) == "canonical_json_depth_limit"


def test_depth_counts_mixed_containers_and_any_branch() -> None:
    mixed = nested_objects(16, nested_lists(16, "x"))  # "x" at depth 32
    assert canonical_json(mixed).count(b'"x"') == 1
    deep_branch = {"shallow": 1, "deep": nested_lists(32, 0)}  # 0 at depth 33 in one branch
    assert refusal(deep_branch) == "canonical_json_depth_limit"
    assert refusal([1, 2, nested_lists(32, 0)]) == "canonical_json_depth_limit"


# --- canonical JSON: numbers and types ----------------------------------------------------------
def test_safe_integer_boundary() -> None:
    assert MAX_SAFE_INTEGER == 2**53 - 1
    assert canonical_json(2**53 - 1) == b"9007199254740991"
    assert canonical_json(-(2**53 - 1)) == b"-9007199254740991"
    assert refusal(2**53) == "canonical_json_unsafe_integer"
    assert refusal(-(2**53)) == "canonical_json_unsafe_integer"
    assert refusal({"nested": [2**64]}) == "canonical_json_unsafe_integer"


def test_bool_is_not_an_integer() -> None:
    assert canonical_json([True, False, None]) == b"[true,false,null]"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, math.nan], {"x": math.inf}])
def test_non_finite_refused(value: Any) -> None:
    assert refusal(value) == "canonical_json_non_finite"


@pytest.mark.parametrize("value", [{1: "a"}, {None: "a"}, {(1, 2): "a"}, {"ok": {2.5: "a"}}, {True: 1}])
def test_non_string_keys_refused(value: Any) -> None:
    assert refusal(value) == "canonical_json_key_type"


@pytest.mark.parametrize(
    "value",
    [b"bytes", {1, 2}, frozenset(), decimal.Decimal("1.5"), datetime(2026, 1, 1), object(), [{"x": b""}]],
)
def test_unsupported_types_refused(value: Any) -> None:
    assert refusal(value) == "canonical_json_unsupported_type"


def test_lone_surrogate_value_refused() -> None:
    # aimos refuses strings that are not valid Unicode; the reference (JS) would emit "\ud800".
    assert refusal("\ud800") == "canonical_json_invalid_string"
    assert refusal(["ok", {"k": "x\udfff"}]) == "canonical_json_invalid_string"


def test_lone_surrogate_key_refused() -> None:
    assert refusal({"k\udfff": 1}) == "canonical_json_invalid_string"


def test_refusal_is_a_usage_error_with_a_hint() -> None:
    with pytest.raises(UsageError) as err:
        canonical_json(math.nan)
    assert isinstance(err.value, CanonicalJSONError)
    assert err.value.hint


def test_tuples_serialize_as_arrays() -> None:
    assert canonical_json((1, "a", (2,))) == canonical_json([1, "a", [2]]) == b'[1,"a",[2]]'


def test_helpers_agree() -> None:
    value = {"b": [1.5, "é"], "a": None}
    data = canonical_json(value)
    assert data == '{"a":null,"b":[1.5,"é"]}'.encode()
    assert canonical_text(value) == data.decode("utf-8")
    assert canonical_sha256(value) == hashlib.sha256(data).digest()
    assert canonical_sha256_hex(value) == hashlib.sha256(data).hexdigest()


def test_canonical_is_independent_of_insertion_order() -> None:
    a = {"z": 1, "a": {"y": 2, "b": 3}}
    b = {"a": {"b": 3, "y": 2}, "z": 1}
    assert canonical_json(a) == canonical_json(b) == b'{"a":{"b":3,"y":2},"z":1}'


def test_round_trip_of_python_json() -> None:
    """A JSON text Python parses into floats canonicalizes as JavaScript prints it."""
    parsed = json.loads('{"w":1.0,"big":1e21,"tiny":1e-7,"neg":-0.0,"sum":0.30000000000000004}')
    expected = b'{"big":1e+21,"neg":0,"sum":0.30000000000000004,"tiny":1e-7,"w":1}'
    assert canonical_json(parsed) == expected


# --- base64url --------------------------------------------------------------------------------------
def b64u_reason(text: Any) -> str | None:
    with pytest.raises(EncodingError) as err:
        b64u_decode(text)
    return err.value.reason


@pytest.mark.parametrize("text", ["AA==", "QUI=", "QUJD="])
def test_b64u_padding_refused(text: str) -> None:
    assert b64u_reason(text) == "base64url_invalid"


@pytest.mark.parametrize("text", ["ab+c", "ab/c", "ab c", "ab.c", "é", "AAAA\n", " AAAA", "AA\x00A"])
def test_b64u_non_alphabet_refused(text: str) -> None:
    assert b64u_reason(text) == "base64url_invalid"


@pytest.mark.parametrize("text", ["A", "AAAAA", "QUJDR"])
def test_b64u_length_mod_4_eq_1_refused(text: str) -> None:
    assert len(text) % 4 == 1
    assert b64u_reason(text) == "base64url_invalid"


@pytest.mark.parametrize(
    ("canonical_text", "non_canonical"),
    [("AA", "AB"), ("AA", "AP"), ("QUI", "QUJ"), ("_w", "_x"), ("AAA", "AAB")],
)
def test_b64u_non_canonical_trailing_bits_refused(canonical_text: str, non_canonical: str) -> None:
    decoded = b64u_decode(canonical_text)
    assert b64u_encode(decoded) == canonical_text
    # the non-canonical spelling would decode to the same bytes if trailing bits were ignored
    lenient = base64.urlsafe_b64decode(non_canonical + "=" * (-len(non_canonical) % 4))
    assert lenient == decoded
    assert b64u_reason(non_canonical) == "base64url_non_canonical"


def test_b64u_refuses_non_strings() -> None:
    assert b64u_reason(b"AAAA") == "base64url_invalid"
    assert b64u_reason(None) == "base64url_invalid"


def test_b64u_round_trip_all_lengths() -> None:
    for n in range(0, 67):
        data = hashlib.sha512(bytes([n])).digest()[: n % 64] + bytes(n // 64)
        text = b64u_encode(data)
        assert "=" not in text and "+" not in text and "/" not in text
        assert b64u_decode(text) == data
    assert b64u_decode("") == b""
    assert b64u_encode(b"\xfb\xff") == "-_8"


# --- hex, uuid, integers, framing, floats -----------------------------------------------------------
def test_hex32() -> None:
    digest = hashlib.sha256(b"x").digest()
    assert hex32(digest.hex()) == digest
    assert is_hex64(digest.hex())
    for bad in (digest.hex().upper(), digest.hex()[:-1], digest.hex() + "0", "g" * 64, None, 5):
        assert not is_hex64(bad)
    with pytest.raises(EncodingError) as err:
        hex32(digest.hex().upper())
    assert err.value.reason == "hash_hex_invalid"


def test_hex32_refuses_trailing_newline() -> None:
    text = "ab" * 32 + "\n"
    assert not is_hex64(text)
    with pytest.raises(EncodingError):
        hex32(text)


def test_uuid16() -> None:
    value = "11111111-1111-4111-8111-111111111111"
    assert uuid16(value) == bytes.fromhex(value.replace("-", ""))
    assert len(uuid16("00000000-0000-0000-0000-000000000000")) == 16
    for bad in ("not-a-uuid", "", "11111111-1111-4111-8111-11111111111", None, 12):
        with pytest.raises(EncodingError) as err:
            uuid16(bad)  # type: ignore[arg-type]
        assert err.value.reason == "uuid_invalid"


def test_fixed_width_integers() -> None:
    assert be32(-1) == b"\xff\xff\xff\xff"
    assert be32(-(2**31)) == b"\x80\x00\x00\x00"
    assert be32(2**31 - 1) == b"\x7f\xff\xff\xff"
    assert be32(3) == b"\x00\x00\x00\x03"
    assert be64(-1) == b"\xff" * 8
    assert be64(1786387794) == (1786387794).to_bytes(8, "big")
    assert u16(0xABCD) == b"\xab\xcd"
    assert u32(2**32 - 1) == b"\xff" * 4
    assert u64(2**64 - 1) == b"\xff" * 8
    assert float4_be(0.9).hex() == "3f666666"
    assert float4_be(1.0).hex() == "3f800000"


def test_framed() -> None:
    assert framed("hom") == b"\x00\x00\x00\x03hom"
    assert framed("é") == b"\x00\x00\x00\x02\xc3\xa9"  # length in bytes, not characters
    with pytest.raises(EncodingError) as err:
        framed("")
    assert err.value.reason == "framed_empty"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (T0, "2026-08-10T18:49:54.000Z"),
        (1786447260, "2026-08-11T11:21:00.000Z"),
        (253402300799, "9999-12-31T23:59:59.000Z"),
    ],
)
def test_iso_ms_round_trip(seconds: int, text: str) -> None:
    assert iso_ms(seconds) == text
    assert parse_iso_ms(text) == seconds
    assert iso_ms(parse_iso_ms(text)) == text


@pytest.mark.parametrize("text", ["2026-08-10T18:49:54Z", "2026-08-10 18:49:54.000Z", "yesterday", ""])
def test_parse_iso_ms_refuses(text: str) -> None:
    with pytest.raises(EncodingError) as err:
        parse_iso_ms(text)
    assert err.value.reason == "time_invalid"


# --- Ed25519 keys -----------------------------------------------------------------------------------
def test_keypair_repr_hides_the_seed() -> None:
    seed = MASTER.seed
    secrets = [
        seed.hex(),
        seed.hex().upper(),
        base64.b64encode(seed).decode(),
        base64.b64encode(seed).decode().rstrip("="),
        b64u_encode(seed),
        repr(seed),
    ]
    shown = [repr(MASTER), str(MASTER), f"{MASTER}", f"{MASTER!r}", repr([MASTER]), repr({"k": MASTER})]
    for text in shown:
        for secret in secrets:
            assert secret not in text
    assert MASTER.fingerprint in repr(MASTER)


def test_keypair() -> None:
    again = KeyPair(MASTER.seed)
    assert again.raw_public == MASTER.raw_public and len(MASTER.raw_public) == 32
    assert MASTER.public_b64u == public_key_b64u(MASTER.raw_public)
    der = b64u_decode(MASTER.public_b64u)
    assert len(der) == 44 and der.startswith(SPKI_PREFIX) and der == spki_der(MASTER.raw_public)
    assert raw_from_spki(der) == MASTER.raw_public
    assert MASTER.fingerprint == hashlib.sha256(der).hexdigest() == fingerprint_of_b64u(MASTER.public_b64u)
    assert MASTER.fingerprint != AGENT.fingerprint
    assert KeyPair.generate().seed != KeyPair.generate().seed
    with pytest.raises(EncodingError) as err:
        KeyPair(b"\x00" * 31)
    assert err.value.reason == "seed_invalid"


def test_spki_refusals() -> None:
    with pytest.raises(EncodingError):
        spki_der(b"\x00" * 31)
    with pytest.raises(EncodingError):
        raw_from_spki(b"\x00" * 44)
    with pytest.raises(EncodingError):
        raw_from_spki(SPKI_PREFIX + b"\x00" * 31)


def test_sign_and_verify() -> None:
    message = b"hello"
    signature = MASTER.sign(message)
    assert len(signature) == 64
    assert signature == MASTER.sign(message)  # Ed25519 is deterministic
    assert verify(MASTER.public_b64u, message, signature)
    assert verify(MASTER.raw_public, message, signature)
    assert not verify(MASTER.public_b64u, message + b"!", signature)
    assert not verify(AGENT.public_b64u, message, signature)
    assert not verify(MASTER.public_b64u, message, signature[:63])
    assert not verify(MASTER.public_b64u, message, bytes([signature[0] ^ 1]) + signature[1:])
    assert not verify("not base64url!", message, signature)
    assert not verify(b64u_encode(b"\x00" * 44), message, signature)
    assert not verify(b"\x00" * 31, message, signature)


# --- signed-message forms ---------------------------------------------------------------------------
def test_payload_message_form_1() -> None:
    assert messages.payload_message({"b": 1, "a": "x"}, "n0nce", 1700000000) == (
        b'{"a":"x","b":1}\nn0nce\n1700000000'
    )


def test_request_message_form_3() -> None:
    message = messages.request_message({"q": 1}, "post", "/aimos/recall?x=1&y=2", "n", 5)
    assert message == b'{"q":1}\nPOST\n/aimos/recall\nn\n5'


def test_nonce_and_skew() -> None:
    nonces = {messages.new_nonce() for _ in range(8)}
    assert len(nonces) == 8
    assert all(len(b64u_decode(n)) == messages.NONCE_BYTES == 16 for n in nonces)
    assert messages.within_skew(1000, 1300) and messages.within_skew(1300, 1000)
    assert not messages.within_skew(1000, 1301) and not messages.within_skew(1301, 1000)


# --- certificates -----------------------------------------------------------------------------------
def issue(**overrides: Any) -> Certificate:
    fields: dict[str, Any] = {
        "agent_id": "codex",
        "pubkey": AGENT.public_b64u,
        "device_fp": "unit-device",
        "valid_from": T0,
        "valid_until": T0 + 30 * 86_400,
        "issued_at": T0,
    }
    fields.update(overrides)
    return issue_certificate(MASTER, **fields)


def encode_certificate(body: dict[str, Any], sig: str) -> str:
    return b64u_encode(canonical_json({"body": body, "sig": sig}))


def test_certificate_issue_parse_verify() -> None:
    cert = issue()
    assert json.loads(b64u_decode(cert.text)) == {"body": cert.body, "sig": cert.sig}
    assert b64u_decode(cert.text) == canonical_json({"body": cert.body, "sig": cert.sig})
    assert set(cert.body) == {
        "v", "agent_id", "pubkey", "device_fp", "valid_from", "valid_until", "issuer", "issued_at",
    }  # fmt: skip
    assert cert.body["v"] == 1 and cert.body["issuer"] == MASTER_ISSUER
    assert verify(MASTER.public_b64u, canonical_json(cert.body), b64u_decode(cert.sig))
    parsed = parse_certificate(cert.text)
    assert parsed == cert
    assert (parsed.agent_id, parsed.pubkey) == ("codex", AGENT.public_b64u)
    assert (parsed.valid_from, parsed.valid_until) == (T0, T0 + 30 * 86_400)
    verify_certificate(parsed, MASTER.public_b64u)
    verify_certificate(parsed, MASTER.public_b64u, at=T0 + 1)
    assert parsed.fingerprint == cert_fingerprint(cert.text)
    assert parsed.fingerprint == hashlib.sha256(cert.text.encode("ascii")).hexdigest()


def test_certificate_wrong_issuer_key() -> None:
    cert = issue()
    for key in (OTHER.public_b64u, AGENT.public_b64u):
        with pytest.raises(SignatureError) as err:
            verify_certificate(cert, key)
        assert err.value.reason == "cert_signature_invalid"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("agent_id", "mallory"),
        ("pubkey", OTHER.public_b64u),
        ("valid_until", T0 + 365 * 86_400),
        ("device_fp", "other-device"),
        ("issued_at", T0 + 1),
    ],
)
def test_certificate_tampered_body(field: str, value: Any) -> None:
    cert = issue()
    tampered = parse_certificate(encode_certificate({**cert.body, field: value}, cert.sig))
    with pytest.raises(SignatureError) as err:
        verify_certificate(tampered, MASTER.public_b64u)
    assert err.value.reason == "cert_signature_invalid"
    assert tampered.fingerprint != cert.fingerprint


def test_certificate_tampered_or_malformed_signature() -> None:
    cert = issue()
    bad_sig = b64u_encode(bytes(64))
    for sig in (bad_sig, "not base64url!", b64u_encode(b64u_decode(cert.sig)[:63])):
        forged = parse_certificate(encode_certificate(cert.body, sig))
        with pytest.raises(SignatureError) as err:
            verify_certificate(forged, MASTER.public_b64u)
        assert err.value.reason == "cert_signature_invalid"


def test_certificate_issuer_must_be_accepted() -> None:
    by_fingerprint = issue(issuer=MASTER.fingerprint)
    with pytest.raises(SignatureError) as err:
        verify_certificate(by_fingerprint, MASTER.public_b64u)
    assert err.value.reason == "cert_issuer_invalid"
    verify_certificate(
        by_fingerprint, MASTER.public_b64u, accepted_issuers=(MASTER_ISSUER, MASTER.fingerprint)
    )
    self_signed = issue_certificate(
        AGENT,
        agent_id="housekeeper",
        pubkey=AGENT.public_b64u,
        device_fp="d",
        valid_from=T0,
        valid_until=253402300799,
        issued_at=T0,
        issuer="housekeeper",
    )
    with pytest.raises(SignatureError) as err:
        verify_certificate(self_signed, MASTER.public_b64u)
    assert err.value.reason == "cert_issuer_invalid"
    verify_certificate(self_signed, AGENT.public_b64u, accepted_issuers=("housekeeper",))


def test_certificate_window() -> None:
    cert = issue()
    verify_certificate(cert, MASTER.public_b64u, at=cert.valid_from)  # bounds are inclusive
    verify_certificate(cert, MASTER.public_b64u, at=cert.valid_until)
    for at in (cert.valid_from - 1, cert.valid_until + 1):
        with pytest.raises(SignatureError) as err:
            verify_certificate(cert, MASTER.public_b64u, at=at)
        assert err.value.reason == "cert_window"
    for until in (T0, T0 - 1):
        with pytest.raises(EncodingError) as enc_err:
            issue(valid_until=until)
        assert enc_err.value.reason == "cert_window"


def _good_body() -> dict[str, Any]:
    return dict(issue().body)


@pytest.mark.parametrize(
    "text",
    [
        "not base64url!",
        b64u_encode(b"not json"),
        b64u_encode(b"\xff\xfe"),
        b64u_encode(b"[1, 2]"),
        encode_certificate(_good_body(), "x")[:-2] + "AA",  # breaks the JSON
        b64u_encode(canonical_json({"body": _good_body()})),
        b64u_encode(canonical_json({"body": _good_body(), "sig": "x", "extra": 1})),
        encode_certificate({k: v for k, v in _good_body().items() if k != "device_fp"}, "x"),
        encode_certificate({**_good_body(), "v": 2}, "x"),
        encode_certificate({**_good_body(), "valid_from": "1786387794"}, "x"),
        encode_certificate({**_good_body(), "valid_until": 1.5e9}, "x"),
        encode_certificate({**_good_body(), "issued_at": True}, "x"),
        encode_certificate({**_good_body(), "valid_until": T0}, "x"),
        b64u_encode(canonical_json({"body": "text", "sig": "x"})),
        b64u_encode(canonical_json({"body": _good_body(), "sig": 5})),
    ],
)
def test_certificate_malformed(text: str) -> None:
    with pytest.raises(SignatureError) as err:
        parse_certificate(text)
    assert err.value.reason == "cert_malformed"


def test_encoding_module_reasons_are_closed_vocabulary() -> None:
    """Every EncodingError the encoders raise above carries a reason (never None)."""
    for call in (
        lambda: b64u_decode("A"),
        lambda: hex32("x"),
        lambda: uuid16("x"),
        lambda: framed(""),
        lambda: parse_iso_ms("x"),
    ):
        with pytest.raises(EncodingError) as err:
            call()
        assert isinstance(err.value.reason, str) and err.value.reason


@pytest.mark.parametrize(
    "text",
    [
        "2026-08-10T18:49:54.000Z",
        "1969-12-31T23:59:59.000Z",
        "1969-12-31T23:59:59.500Z",
        "2024-02-29T00:00:00.000Z",
        "2023-02-29T00:00:00.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-08-10T24:00:00.000Z",
        "2026-08-10T18:49:60.000Z",
        "2026-8-10T18:49:54.000Z",
        "2026-08-10T18:49:54.5Z",
        "0001-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "２０２６-08-10T18:49:54.000Z",
    ],
)
def test_parse_iso_ms_reads_what_strptime_reads(text: str) -> None:
    """The fast path (the form iso_ms writes) gives exactly what strptime gives, refusals too."""
    from datetime import UTC, datetime

    try:
        want: int | str = int(
            datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()
        )
    except ValueError:
        want = "time_invalid"
    try:
        got: int | str = parse_iso_ms(text)
    except EncodingError as exc:
        assert exc.reason is not None
        got = exc.reason
    assert got == want
