-- aimos brain schema, migration 22: a device cut by its record number, and the home handed over
-- (issue 39).
--
--   hub_cuts      the master's record that a device's records on the hub are accepted up to and
--                 including its record number ``through_n`` and refused after it, on every device
--                 and whatever times those later records claim (a revoked device's clock set back
--                 signs rows that look older than its revocation). Written with a device's
--                 revocation (``revoked``), naming the newest of its records the revoking device
--                 held, and when the master moves the home without the old home (``home_moved``).
--                 Append-only, sealed, travels to every device.
--   hub_handovers the record that makes a named home (hub_homes) the one that writes the weight
--                 and label chains: the home before it stops at the record that hands over, so
--                 two devices never both append (one writer per chain). Signed by the housekeeper
--                 of the device that was the home, when it learns of the move; or by the master
--                 (a forced move: the old home is lost, and a cut of it goes with the handover).
--                 One per home record. Append-only, sealed, travels to every device.

CREATE TABLE hub_cuts (
    cut_id              TEXT PRIMARY KEY,
    device_fp           TEXT NOT NULL,
    through_n           INTEGER NOT NULL CHECK (through_n >= 0),
    why                 TEXT NOT NULL CHECK (why IN ('revoked', 'home_moved')),
    signed_body         TEXT NOT NULL,
    master_fingerprint  TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL
) STRICT;

CREATE INDEX hub_cuts_device ON hub_cuts (device_fp, through_n);

CREATE TRIGGER hub_cuts_no_delete BEFORE DELETE ON hub_cuts
BEGIN SELECT RAISE(ABORT, 'aimos: hub_cuts is append-only'); END;

CREATE TRIGGER hub_cuts_no_update BEFORE UPDATE ON hub_cuts
BEGIN SELECT RAISE(ABORT, 'aimos: hub_cuts is append-only'); END;

CREATE TRIGGER hub_cuts_seal_aware BEFORE INSERT ON hub_cuts
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_cuts_verify_insert BEFORE INSERT ON hub_cuts
BEGIN
    SELECT RAISE(ABORT, 'aimos: cut record fields differ from its signed body')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR json_extract(NEW.signed_body, '$.schema') IS NOT 'aimos.hub-cut/v1'
           OR json_extract(NEW.signed_body, '$.cut_id') IS NOT NEW.cut_id
           OR json_extract(NEW.signed_body, '$.device_fp') IS NOT NEW.device_fp
           OR json_extract(NEW.signed_body, '$.through_n') IS NOT NEW.through_n
           OR json_extract(NEW.signed_body, '$.why') IS NOT NEW.why
           OR json_extract(NEW.signed_body, '$.brain_id') IS NOT (SELECT value FROM brain_meta WHERE key = 'brain_id')
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: a cut record is signed by the master')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint),
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE hub_handovers (
    home_id             TEXT PRIMARY KEY REFERENCES hub_homes (home_id),
    from_device         TEXT NOT NULL,
    signed_body         TEXT NOT NULL,
    signer_valid_from   INTEGER,
    master_fingerprint  TEXT,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL,
    CHECK ((signer_valid_from IS NULL) <> (master_fingerprint IS NULL))
) STRICT;

CREATE TRIGGER hub_handovers_no_delete BEFORE DELETE ON hub_handovers
BEGIN SELECT RAISE(ABORT, 'aimos: hub_handovers is append-only'); END;

CREATE TRIGGER hub_handovers_no_update BEFORE UPDATE ON hub_handovers
BEGIN SELECT RAISE(ABORT, 'aimos: hub_handovers is append-only'); END;

CREATE TRIGGER hub_handovers_seal_aware BEFORE INSERT ON hub_handovers
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_handovers_verify_insert BEFORE INSERT ON hub_handovers
BEGIN
    SELECT RAISE(ABORT, 'aimos: handover record fields differ from its signed body')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR json_extract(NEW.signed_body, '$.schema') IS NOT 'aimos.hub-handover/v1'
           OR json_extract(NEW.signed_body, '$.home_id') IS NOT NEW.home_id
           OR json_extract(NEW.signed_body, '$.from_device') IS NOT NEW.from_device
           OR json_extract(NEW.signed_body, '$.signer_valid_from') IS NOT NEW.signer_valid_from
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.brain_id') IS NOT (SELECT value FROM brain_meta WHERE key = 'brain_id')
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: a handover names a home record this brain holds')
        WHERE NOT EXISTS (SELECT 1 FROM hub_homes WHERE home_id = NEW.home_id);
    SELECT RAISE(ABORT, 'aimos: a handover is signed by the master or by the housekeeper of the device it names')
        WHERE aimos_ed25519_verify(
            CASE WHEN NEW.master_fingerprint IS NOT NULL
                 THEN (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint)
                 ELSE (SELECT public_key_b64u FROM identity_epochs
                       WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from
                         AND device_fp = NEW.from_device
                         AND NEW.ts_signed BETWEEN valid_from AND valid_until)
            END,
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;
