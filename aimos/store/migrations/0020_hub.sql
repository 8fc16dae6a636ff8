-- aimos brain schema, migration 20: one brain on several devices, synced through a hub (issue 39).
--
-- A device pushes the rows it wrote to a PostgreSQL hub, encrypted, and pulls the rows the other
-- devices wrote; each pulled row is inserted through this brain's own guards (the same triggers a
-- local write meets) and checked by the in-database verifier before the pull commits, then sealed
-- by this device's housekeeper like any write (aimos/hub: records, sync).
--
--   hub_pulls  one row per device a pull took records from: the hub's order number the pull reached,
--              that device's record count and the hash of its newest record (each device's records
--              form a hash chain the hub cannot reorder, cut or splice), and the seal the pull's own
--              transaction made (so a push never sends back what it pulled), and, for a device
--              whose epochs the master revoked, the first of its records this brain refused: that
--              one and every later one of that device are refused from then on. Append-only, sealed.
--   hub_homes  the device whose housekeeper writes every weight and label chain (one writer per
--              chain: no fork), named by the master. Each names the one before it (the first names
--              none), so the homes are one chain too; the newest is the home. Append-only, sealed,
--              and travels to every device like the identity rows.
--   hub_requests an agent's signed request a device that is not the home recorded for the home to
--              apply (an outcome, whose weight transition is the home's to sign; a save of content
--              already saved, whose occurrence chain is the home's to append to; a correction, whose
--              versions are one chain; a person's judgment, with the master's signature when it
--              raises trust: the label chain is the home's), with the time the
--              device received it (the home checks the request's clock against that time). The
--              home applies each once, in the order it arrives; its nonce is then used on every
--              device. Append-only, sealed, travels.

CREATE TABLE hub_pulls (
    seq           INTEGER PRIMARY KEY,
    hub_seq       INTEGER NOT NULL CHECK (hub_seq >= 1),
    device        TEXT NOT NULL,
    device_n      INTEGER NOT NULL CHECK (device_n >= 1),
    record_hash   TEXT NOT NULL CHECK (length(record_hash) = 64),
    local_seal    INTEGER NOT NULL CHECK (local_seal >= 1),
    pulled_at     INTEGER NOT NULL,
    refused_from  INTEGER CHECK (refused_from IS NULL OR refused_from BETWEEN 1 AND device_n)
) STRICT;

CREATE INDEX hub_pulls_device ON hub_pulls (device, device_n);

CREATE TRIGGER hub_pulls_no_delete BEFORE DELETE ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: hub_pulls is append-only'); END;

CREATE TRIGGER hub_pulls_no_update BEFORE UPDATE ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: hub_pulls is append-only'); END;

CREATE TRIGGER hub_pulls_seal_aware BEFORE INSERT ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_pulls_writer_only BEFORE INSERT ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TRIGGER hub_pulls_forward_only BEFORE INSERT ON hub_pulls
BEGIN
    SELECT RAISE(ABORT, 'aimos: a device''s records are pulled in order, each once')
        WHERE NEW.device_n <= COALESCE(
            (SELECT MAX(device_n) FROM hub_pulls WHERE device = NEW.device), 0);
END;

CREATE TABLE hub_homes (
    home_id             TEXT PRIMARY KEY,
    device_fp           TEXT NOT NULL,
    prev_home_id        TEXT UNIQUE REFERENCES hub_homes (home_id),
    signed_body         TEXT NOT NULL,
    master_fingerprint  TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL
) STRICT;

CREATE TRIGGER hub_homes_no_delete BEFORE DELETE ON hub_homes
BEGIN SELECT RAISE(ABORT, 'aimos: hub_homes is append-only'); END;

CREATE TRIGGER hub_homes_no_update BEFORE UPDATE ON hub_homes
BEGIN SELECT RAISE(ABORT, 'aimos: hub_homes is append-only'); END;

CREATE TRIGGER hub_homes_seal_aware BEFORE INSERT ON hub_homes
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_homes_verify_insert BEFORE INSERT ON hub_homes
BEGIN
    SELECT RAISE(ABORT, 'aimos: home record fields differ from its signed body')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR json_extract(NEW.signed_body, '$.schema') IS NOT 'aimos.hub-home/v1'
           OR json_extract(NEW.signed_body, '$.home_id') IS NOT NEW.home_id
           OR json_extract(NEW.signed_body, '$.device_fp') IS NOT NEW.device_fp
           OR json_extract(NEW.signed_body, '$.prev_home_id') IS NOT NEW.prev_home_id
           OR json_extract(NEW.signed_body, '$.brain_id') IS NOT (SELECT value FROM brain_meta WHERE key = 'brain_id')
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: a home record names the newest home before it (one chain of homes)')
        WHERE NEW.prev_home_id IS NOT (SELECT home_id FROM hub_homes ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: a home record is signed by the master')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint),
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE hub_requests (
    request_id        TEXT PRIMARY KEY,
    device_fp         TEXT NOT NULL,
    agent_id          TEXT NOT NULL,
    agent_valid_from  INTEGER NOT NULL,
    signed_path       TEXT NOT NULL CHECK (signed_path IN ('/aimos/outcome', '/aimos/save', '/aimos/label')),
    body              TEXT NOT NULL,
    nonce             TEXT NOT NULL,
    ts_signed         INTEGER NOT NULL,
    signature_b64u    TEXT NOT NULL,
    received_at       INTEGER NOT NULL,
    master_signature_b64u TEXT,
    UNIQUE (agent_id, nonce),
    FOREIGN KEY (agent_id, agent_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE TRIGGER hub_requests_no_delete BEFORE DELETE ON hub_requests
BEGIN SELECT RAISE(ABORT, 'aimos: hub_requests is append-only'); END;

CREATE TRIGGER hub_requests_no_update BEFORE UPDATE ON hub_requests
BEGIN SELECT RAISE(ABORT, 'aimos: hub_requests is append-only'); END;

CREATE TRIGGER hub_requests_seal_aware BEFORE INSERT ON hub_requests
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_requests_verify_insert BEFORE INSERT ON hub_requests
BEGIN
    SELECT RAISE(ABORT, 'aimos: a forwarded request is an agent''s, from the device its epoch belongs to')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.agent_id AND e.valid_from = NEW.agent_valid_from
              AND e.role = 'agent' AND e.device_fp = NEW.device_fp
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until);
    SELECT RAISE(ABORT, 'aimos: a forwarded request''s body is canonical JSON')
        WHERE aimos_is_canonical(NEW.body) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: a forwarded request''s nonce was already used')
        WHERE EXISTS (SELECT 1 FROM request_nonces n WHERE n.agent_id = NEW.agent_id AND n.nonce = NEW.nonce);
    SELECT RAISE(ABORT, 'aimos: a forwarded request''s signature does not verify under its agent''s epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.agent_id AND valid_from = NEW.agent_valid_from),
            aimos_request_message(NEW.body, 'POST', NEW.signed_path, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: a forwarded judgment''s master signature does not verify')
        WHERE NEW.master_signature_b64u IS NOT NULL
          AND (NEW.signed_path IS NOT '/aimos/label'
               OR aimos_ed25519_verify(
                    (SELECT public_key_b64u FROM master_identity LIMIT 1),
                    aimos_payload_message(NEW.body, NEW.nonce, NEW.ts_signed),
                    NEW.master_signature_b64u) IS NOT 1);
END;
