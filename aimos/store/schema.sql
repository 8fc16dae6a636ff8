-- GENERATED FILE: do not edit. The aimos brain schema after every migration, in one file.
-- Made from aimos/store/migrations/0001_initial.sql .. 0022_hub_cuts_handovers.sql (22 migrations) applied in
-- order to an empty database, then read back from sqlite_master (each statement as SQLite stores
-- it). Applying this file to an empty database makes the same schema (user_version aside).
-- Regenerate: python -m aimos.store.schema --write
-- Order: tables by name; each table, then its indexes, then its triggers, by name. Not listed:
-- SQLite's automatic indexes (from UNIQUE / PRIMARY KEY) and FTS5 shadow tables (made by their
-- virtual table).

CREATE TABLE agent_revocations (
    revocation_id        TEXT PRIMARY KEY,
    company_id           TEXT NOT NULL,
    agent_id             TEXT NOT NULL,
    agent_valid_from     INTEGER NOT NULL,
    revoked_at           INTEGER NOT NULL,
    reason               TEXT NOT NULL,
    master_fingerprint   TEXT NOT NULL,
    signed_body          TEXT NOT NULL,
    content_hash         TEXT NOT NULL,
    nonce                TEXT NOT NULL,
    ts_signed            INTEGER NOT NULL,
    signature_b64u       TEXT NOT NULL,
    prior_identity_hash  TEXT NOT NULL,
    mutation_hash        TEXT NOT NULL UNIQUE,
    UNIQUE (agent_id, agent_valid_from),
    FOREIGN KEY (agent_id, agent_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE TRIGGER agent_revocations_no_delete BEFORE DELETE ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: agent_revocations is append-only'); END;

CREATE TRIGGER agent_revocations_no_update BEFORE UPDATE ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: agent_revocations is append-only'); END;

CREATE TRIGGER agent_revocations_seal_aware BEFORE INSERT ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER agent_revocations_verify_insert BEFORE INSERT ON agent_revocations
BEGIN
    SELECT RAISE(ABORT, 'aimos: revocation content hash does not match its body')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR NEW.content_hash IS NOT aimos_sha256_hex(NEW.signed_body)
           OR NEW.ts_signed IS NOT NEW.revoked_at;
    SELECT RAISE(ABORT, 'aimos: revocation fields differ from its signed body')
        WHERE json_extract(NEW.signed_body, '$.schema') IS NOT 'hom.aimos.agent-revocation/v1'
           OR json_extract(NEW.signed_body, '$.event_type') IS NOT 'REVOKE_AGENT_IDENTITY'
           OR json_extract(NEW.signed_body, '$.agent_id') IS NOT NEW.agent_id
           OR aimos_iso_seconds(json_extract(NEW.signed_body, '$.agent_valid_from'))
                IS NOT NEW.agent_valid_from
           OR json_extract(NEW.signed_body, '$.company_id') IS NOT NEW.company_id
           OR json_extract(NEW.signed_body, '$.reason') IS NOT NEW.reason
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed
           OR json_extract(NEW.signed_body, '$.target_cert_hash') IS NOT (
                SELECT aimos_sha256_hex(certificate) FROM identity_epochs
                WHERE agent_id = NEW.agent_id AND valid_from = NEW.agent_valid_from);
    SELECT RAISE(ABORT, 'aimos: revocation commitments do not recompute')
        WHERE NEW.prior_identity_hash IS NOT (
                SELECT aimos_revocation_prior(agent_id, valid_from, certificate) FROM identity_epochs
                WHERE agent_id = NEW.agent_id AND valid_from = NEW.agent_valid_from)
           OR NEW.mutation_hash IS NOT aimos_revocation_mutation(
                NEW.prior_identity_hash, NEW.content_hash, NEW.signature_b64u);
    SELECT RAISE(ABORT, 'aimos: revocation is not signed by the master')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint),
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE brain_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TRIGGER brain_meta_no_delete BEFORE DELETE ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: brain_meta is append-only'); END;

CREATE TRIGGER brain_meta_no_update BEFORE UPDATE ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: brain_meta is append-only'); END;

CREATE TRIGGER brain_meta_seal_aware BEFORE INSERT ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER brain_meta_writer_only BEFORE INSERT ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TABLE brain_restores (
    restore_id          TEXT PRIMARY KEY,
    signed_body         TEXT NOT NULL,
    master_fingerprint  TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL
) STRICT;

CREATE TRIGGER brain_restores_no_delete BEFORE DELETE ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: brain_restores is append-only'); END;

CREATE TRIGGER brain_restores_no_update BEFORE UPDATE ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: brain_restores is append-only'); END;

CREATE TRIGGER brain_restores_seal_aware BEFORE INSERT ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER brain_restores_verify_insert BEFORE INSERT ON brain_restores
BEGIN
    SELECT RAISE(ABORT, 'aimos: restore record fields differ from its signed body')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR json_extract(NEW.signed_body, '$.schema') IS NOT 'aimos.brain-restore/v1'
           OR json_extract(NEW.signed_body, '$.restore_id') IS NOT NEW.restore_id
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: a restore record is signed by the master')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint),
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE brain_seals (
    seq                INTEGER PRIMARY KEY CHECK (seq >= 1),
    sealed_at          INTEGER NOT NULL,
    signer_valid_from  INTEGER NOT NULL,
    prev_link          BLOB NOT NULL CHECK (length(prev_link) = 32),
    state_root         BLOB NOT NULL CHECK (length(state_root) = 32),
    changes            BLOB NOT NULL,
    signature          BLOB NOT NULL CHECK (length(signature) = 64)
) STRICT;

CREATE TRIGGER brain_seals_no_delete BEFORE DELETE ON brain_seals
BEGIN SELECT RAISE(ABORT, 'aimos: brain_seals is append-only'); END;

CREATE TRIGGER brain_seals_no_update BEFORE UPDATE ON brain_seals
BEGIN SELECT RAISE(ABORT, 'aimos: brain_seals is append-only'); END;

CREATE TRIGGER brain_seals_verify_insert BEFORE INSERT ON brain_seals
BEGIN
    SELECT RAISE(ABORT, 'aimos: a seal follows the newest seal')
        WHERE NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM brain_seals)
           OR NEW.prev_link IS NOT COALESCE(
                (SELECT aimos_seal_link(aimos_seal_hash(seq, sealed_at, signer_valid_from, prev_link,
                                                        state_root, changes), signature)
                 FROM brain_seals WHERE seq = NEW.seq - 1),
                aimos_seal_genesis((SELECT value FROM brain_meta WHERE key = 'brain_id')));
    SELECT RAISE(ABORT, 'aimos: a seal is signed by a housekeeper epoch')
        WHERE aimos_ed25519_verify_blob(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from),
            aimos_seal_hash(NEW.seq, NEW.sealed_at, NEW.signer_valid_from, NEW.prev_link,
                            NEW.state_root, NEW.changes),
            NEW.signature) IS NOT 1;
END;

CREATE TABLE detection_queue (
    seq        INTEGER PRIMARY KEY,
    memory_id  TEXT NOT NULL REFERENCES memories(memory_id)
);

CREATE TRIGGER detection_queue_filled_by_save BEFORE INSERT ON detection_queue
BEGIN
    SELECT RAISE(ABORT, 'aimos: only a save queues a memory for the detector, in save order')
        WHERE NOT EXISTS (SELECT 1 FROM memories WHERE memory_id = NEW.memory_id
                          AND rowid = (SELECT MAX(rowid) FROM memories));
END;

CREATE TRIGGER detection_queue_no_delete BEFORE DELETE ON detection_queue
BEGIN SELECT RAISE(ABORT, 'aimos: the detection queue is append-only'); END;

CREATE TRIGGER detection_queue_no_update BEFORE UPDATE ON detection_queue
BEGIN SELECT RAISE(ABORT, 'aimos: the detection queue is append-only'); END;

CREATE TABLE detection_runs (
    seq          INTEGER PRIMARY KEY,
    through_seq  INTEGER NOT NULL,
    ran_at       INTEGER NOT NULL
);

CREATE TRIGGER detection_runs_forward BEFORE INSERT ON detection_runs
BEGIN
    SELECT RAISE(ABORT, 'aimos: a detection run moves forward through the queue, never past its end')
        WHERE NEW.through_seq <= COALESCE((SELECT through_seq FROM detection_runs ORDER BY seq DESC LIMIT 1), 0)
           OR NEW.through_seq > COALESCE((SELECT MAX(seq) FROM detection_queue), 0);
END;

CREATE TRIGGER detection_runs_no_delete BEFORE DELETE ON detection_runs
BEGIN SELECT RAISE(ABORT, 'aimos: detection runs are append-only'); END;

CREATE TRIGGER detection_runs_no_update BEFORE UPDATE ON detection_runs
BEGIN SELECT RAISE(ABORT, 'aimos: detection runs are append-only'); END;

CREATE TABLE epistemic_fingerprints (
    memory_id    TEXT PRIMARY KEY REFERENCES memories (memory_id),
    company_id   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX epistemic_fingerprints_cluster ON epistemic_fingerprints (company_id, fingerprint);

CREATE TRIGGER epistemic_fingerprints_no_delete BEFORE DELETE ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: fingerprints are append-only'); END;

CREATE TRIGGER epistemic_fingerprints_no_update BEFORE UPDATE ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: fingerprints are append-only'); END;

CREATE TRIGGER epistemic_fingerprints_seal_aware BEFORE INSERT ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER epistemic_fingerprints_verify_insert BEFORE INSERT ON epistemic_fingerprints
BEGIN
    SELECT RAISE(ABORT, 'aimos: a fingerprint belongs to a memory of the same company')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m WHERE m.memory_id = NEW.memory_id AND m.company_id = NEW.company_id);
END;

CREATE TRIGGER epistemic_fingerprints_writer_only BEFORE INSERT ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TABLE events (
    event_id            TEXT PRIMARY KEY,
    company_id          TEXT NOT NULL,
    operation           TEXT NOT NULL,
    signer_agent_id     TEXT NOT NULL,
    signer_valid_from   INTEGER NOT NULL,
    ledger_seq          INTEGER NOT NULL CHECK (ledger_seq >= 1),
    subject_memory_id   TEXT,
    signed_body         TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL,
    prev_mutation_hash  TEXT NOT NULL,
    mutation_hash       TEXT NOT NULL UNIQUE, signed_body_deflated BLOB,
    UNIQUE (signer_agent_id, signer_valid_from, ledger_seq),
    FOREIGN KEY (signer_agent_id, signer_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE INDEX events_operation ON events (operation, ts_signed);

CREATE INDEX events_signed_classification_subject
    ON events (json_extract(signed_body, '$.subject_memory_id'))
    WHERE operation = 'memory_epistemic_classified';

CREATE INDEX events_subject ON events (subject_memory_id) WHERE subject_memory_id IS NOT NULL;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'aimos: events are append-only'); END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'aimos: events are append-only'); END;

CREATE TRIGGER events_seal_aware BEFORE INSERT ON events
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER events_verify_insert BEFORE INSERT ON events
BEGIN
    SELECT RAISE(ABORT, 'aimos: a recall_receipt, memory_saved or outcome event stores its body deflated, beside an empty text; any other event stores it as text')
        WHERE (NEW.operation IN ('recall_receipt', 'memory_saved', 'mutation_outcome_evidence_v2', 'cognitive_weight_adjusted',
                               'cognitive_weight_unchanged', 'mutation_occurrence_observation_retained'))
              IS NOT (NEW.signed_body_deflated IS NOT NULL AND NEW.signed_body IS '');
    SELECT RAISE(ABORT, 'aimos: event body is not canonical JSON')
        WHERE aimos_is_canonical(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated)) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: event content hash does not match its body')
        WHERE NEW.content_hash IS NOT aimos_sha256_hex(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated));
    SELECT RAISE(ABORT, 'aimos: event fields differ from its signed body')
        WHERE json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.event_id') IS NOT NEW.event_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.company_id') IS NOT NEW.company_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.operation') IS NOT NEW.operation
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.signer_agent_id') IS NOT NEW.signer_agent_id
           OR aimos_iso_seconds(json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.signer_valid_from'))
                IS NOT NEW.signer_valid_from
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.subject_memory_id') IS NOT NEW.subject_memory_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.ledger_seq') IS NOT NEW.ledger_seq
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.prev_mutation_hash') IS NOT NEW.prev_mutation_hash
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: events are signed by the housekeeper, inside its valid and unrevoked epoch')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.role = 'housekeeper'
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: event ledger_seq does not follow its chain')
        WHERE NEW.ledger_seq IS NOT (
            SELECT COALESCE(MAX(ledger_seq), 0) + 1 FROM events
            WHERE signer_agent_id = NEW.signer_agent_id AND signer_valid_from = NEW.signer_valid_from);
    SELECT RAISE(ABORT, 'aimos: event predecessor is not the head of its chain')
        WHERE NEW.prev_mutation_hash IS NOT COALESCE(
            (SELECT mutation_hash FROM events
             WHERE signer_agent_id = NEW.signer_agent_id AND signer_valid_from = NEW.signer_valid_from
             ORDER BY ledger_seq DESC LIMIT 1),
            aimos_event_genesis((SELECT value FROM brain_meta WHERE key = 'company_id'),
                                NEW.signer_agent_id, NEW.signer_valid_from));
    SELECT RAISE(ABORT, 'aimos: event mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT
            aimos_event_link(NEW.prev_mutation_hash, NEW.content_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: event signature does not verify under its signer epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_payload_message(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

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

CREATE TRIGGER hub_pulls_forward_only BEFORE INSERT ON hub_pulls
BEGIN
    SELECT RAISE(ABORT, 'aimos: a device''s records are pulled in order, each once')
        WHERE NEW.device_n <= COALESCE(
            (SELECT MAX(device_n) FROM hub_pulls WHERE device = NEW.device), 0);
END;

CREATE TRIGGER hub_pulls_no_delete BEFORE DELETE ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: hub_pulls is append-only'); END;

CREATE TRIGGER hub_pulls_no_update BEFORE UPDATE ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: hub_pulls is append-only'); END;

CREATE TRIGGER hub_pulls_seal_aware BEFORE INSERT ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER hub_pulls_writer_only BEFORE INSERT ON hub_pulls
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

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

CREATE TABLE identity_epochs (
    agent_id          TEXT NOT NULL,
    valid_from        INTEGER NOT NULL,
    valid_until       INTEGER NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('housekeeper', 'agent')),
    identity_tier     TEXT NOT NULL,
    public_key_b64u   TEXT NOT NULL UNIQUE,
    key_fingerprint   TEXT NOT NULL,
    certificate       TEXT NOT NULL,
    cert_fingerprint  TEXT NOT NULL UNIQUE,
    device_fp         TEXT NOT NULL,
    key_ref           TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (agent_id, valid_from),
    CHECK (valid_until > valid_from)
) STRICT;

CREATE TRIGGER identity_epochs_no_delete BEFORE DELETE ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: identity_epochs is append-only'); END;

CREATE TRIGGER identity_epochs_no_update BEFORE UPDATE ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: identity_epochs is append-only'); END;

CREATE TRIGGER identity_epochs_seal_aware BEFORE INSERT ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER identity_epochs_verify_insert BEFORE INSERT ON identity_epochs
BEGIN
    SELECT RAISE(ABORT, 'aimos: the housekeeper role belongs to agent id housekeeper alone')
        WHERE (NEW.role = 'housekeeper') IS NOT (NEW.agent_id = 'housekeeper')
           OR NEW.agent_id = 'aimos_flag_signer';
    SELECT RAISE(ABORT, 'aimos: epoch certificate is not issued by the master for this key and window')
        WHERE aimos_certificate_matches(
            NEW.certificate, (SELECT public_key_b64u FROM master_identity LIMIT 1),
            NEW.agent_id, NEW.public_key_b64u, NEW.valid_from, NEW.valid_until) IS NOT 1
           OR NEW.cert_fingerprint IS NOT aimos_sha256_hex(NEW.certificate)
           OR NEW.key_fingerprint IS NOT aimos_fingerprint(NEW.public_key_b64u);
END;

CREATE TABLE master_identity (
    fingerprint     TEXT PRIMARY KEY,
    public_key_b64u TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TRIGGER master_identity_no_delete BEFORE DELETE ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: master_identity is append-only'); END;

CREATE TRIGGER master_identity_no_update BEFORE UPDATE ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: master_identity is append-only'); END;

CREATE TRIGGER master_identity_seal_aware BEFORE INSERT ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER master_identity_verify_insert BEFORE INSERT ON master_identity
BEGIN
    SELECT RAISE(ABORT, 'aimos: a brain has exactly one master identity')
        WHERE EXISTS (SELECT 1 FROM master_identity);
    SELECT RAISE(ABORT, 'aimos: master fingerprint does not match its public key')
        WHERE NEW.fingerprint IS NOT aimos_fingerprint(NEW.public_key_b64u);
END;

CREATE TABLE "memories" (
    memory_id               TEXT PRIMARY KEY,
    company_id              TEXT NOT NULL,
    key                     TEXT,
    value                   TEXT NOT NULL,
    scope                   TEXT NOT NULL,
    memory_type             TEXT NOT NULL,
    clearance_level         INTEGER NOT NULL CHECK (clearance_level BETWEEN 0 AND 12),
    data_class              TEXT NOT NULL
        CHECK (data_class IN ('public', 'internal', 'confidential', 'restricted')),
    source                  TEXT NOT NULL,
    author_agent_id         TEXT NOT NULL,
    author_valid_from       INTEGER NOT NULL,
    created_at              INTEGER NOT NULL,
    live_content_hash       TEXT NOT NULL,
    save_provenance_id      TEXT NOT NULL UNIQUE REFERENCES memory_provenance (provenance_id),
    save_mutation_hash      TEXT NOT NULL UNIQUE,
    quarantine              INTEGER NOT NULL CHECK (quarantine IN (0, 1)),
    retrieval_weight_milli  INTEGER NOT NULL CHECK (retrieval_weight_milli BETWEEN 100 AND 3000),
    epistemic_label         TEXT NOT NULL
) STRICT;

CREATE INDEX memories_content ON memories (company_id, live_content_hash);

CREATE INDEX memories_created ON memories (company_id, created_at);

CREATE INDEX memories_source_order ON memories (company_id, source, memory_type);

CREATE TRIGGER memories_index_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_fts (rowid, text)
    VALUES (NEW.rowid, aimos_index_text(COALESCE(NEW.key, '') || ' ' || NEW.value));
    -- a turn's context: the two turns saved before it from the same source, and itself
    INSERT INTO memory_context_fts (rowid, text)
    SELECT NEW.rowid, aimos_index_text(context) FROM (
        SELECT group_concat(t, ' ') AS context FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 3))
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
    -- the previous turn's context now starts with the new one
    DELETE FROM memory_context_fts
    WHERE NEW.memory_type IN ('dialog_turn', 'message') AND rowid = (
        SELECT rowid FROM memories
        WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
          AND rowid < NEW.rowid
        ORDER BY rowid DESC LIMIT 1);
    INSERT INTO memory_context_fts (rowid, text)
    SELECT p.rowid, aimos_index_text((
        SELECT group_concat(t, ' ') FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 4)))
    FROM (SELECT rowid FROM memories
          WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
            AND rowid < NEW.rowid
          ORDER BY rowid DESC LIMIT 1) p
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
END;

CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: memories are never deleted; only the purge ceremony removes a brain'); END;

CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead')
        WHERE NEW.memory_id IS NOT OLD.memory_id OR NEW.company_id IS NOT OLD.company_id
           OR NEW.scope IS NOT OLD.scope
           OR NEW.memory_type IS NOT OLD.memory_type OR NEW.clearance_level IS NOT OLD.clearance_level
           OR NEW.data_class IS NOT OLD.data_class
           OR NEW.author_agent_id IS NOT OLD.author_agent_id
           OR NEW.author_valid_from IS NOT OLD.author_valid_from OR NEW.created_at IS NOT OLD.created_at
           OR NEW.live_content_hash IS NOT OLD.live_content_hash
           OR NEW.save_provenance_id IS NOT OLD.save_provenance_id
           OR NEW.save_mutation_hash IS NOT OLD.save_mutation_hash
           OR NEW.quarantine IS NOT OLD.quarantine;
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a text')
        WHERE NEW.value IS NOT OLD.value
          AND (NEW.value IS NOT ''
               OR NOT EXISTS (SELECT 1 FROM memory_redactions r WHERE r.memory_id = NEW.memory_id));
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a source')
        WHERE NEW.source IS NOT OLD.source
          AND (NEW.source IS NOT ''
               OR NOT EXISTS (
                SELECT 1 FROM memory_redactions r
                WHERE r.memory_id = NEW.memory_id
                  AND json_extract(r.record_json, '$.removed')
                      IN (json_array('key', 'source', 'value'), json_array('source', 'value'))));
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a key')
        WHERE NEW.key IS NOT OLD.key
          AND (NEW.key IS NOT NULL
               OR NOT EXISTS (
                SELECT 1 FROM memory_redactions r
                WHERE r.memory_id = NEW.memory_id
                  AND json_extract(r.record_json, '$.removed') = json_array('key', 'source', 'value')));
    SELECT RAISE(ABORT, 'aimos: the live label may only follow a signed classification')
        WHERE NEW.epistemic_label IS NOT OLD.epistemic_label
          AND NEW.epistemic_label IS NOT (
            SELECT label FROM memory_classifications WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: the live weight may only follow a signed, authorized transition')
        WHERE NEW.retrieval_weight_milli IS NOT OLD.retrieval_weight_milli
          AND NEW.retrieval_weight_milli IS NOT (
            SELECT new_weight_milli FROM weight_projections WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
END;

CREATE TRIGGER memories_queue_detection AFTER INSERT ON memories
WHEN NEW.scope IS NOT 'system' AND NEW.memory_type NOT IN ('dialog_turn', 'message')
BEGIN
    INSERT INTO detection_queue (memory_id) VALUES (NEW.memory_id);
END;

CREATE TRIGGER memories_seal_aware BEFORE INSERT ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER memories_verify_insert BEFORE INSERT ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: live content hash does not match the row')
        WHERE NEW.live_content_hash IS NOT aimos_live_content_hash(
            NEW.key, NEW.value, NEW.scope, NEW.memory_type, NEW.clearance_level,
            NEW.data_class, NEW.source);
    SELECT RAISE(ABORT, 'aimos: a memory needs its signed save provenance node with the same content')
        WHERE NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.provenance_id = NEW.save_provenance_id
              AND p.mutation_hash = NEW.save_mutation_hash
              AND p.memory_id = NEW.memory_id
              AND p.company_id = NEW.company_id
              AND p.event_type = 'SAVE'
              AND p.is_genesis = 1
              AND p.signer_agent_id = NEW.author_agent_id
              AND p.signer_valid_from = NEW.author_valid_from
              AND aimos_live_content_hash(
                    json_extract(p.body_json, '$.key'), json_extract(p.body_json, '$.value'),
                    json_extract(p.body_json, '$.scope'), json_extract(p.body_json, '$.memory_type'),
                    json_extract(p.body_json, '$.clearance_level'),
                    json_extract(p.body_json, '$.data_class'), json_extract(p.body_json, '$.source'))
                  = NEW.live_content_hash);
    SELECT RAISE(ABORT, 'aimos: a memory needs the housekeeper''s signed memory_saved event')
        WHERE NOT EXISTS (
            SELECT 1 FROM events e
            WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'memory_saved'
              AND e.company_id = NEW.company_id
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.save_mutation_hash') = NEW.save_mutation_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.live_content_hash') = NEW.live_content_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.retained_quarantine') = NEW.quarantine);
    SELECT RAISE(ABORT, 'aimos: a new memory starts at weight 1.000 (0.100 in quarantine) and unverified')
        WHERE NEW.retrieval_weight_milli IS NOT (CASE NEW.quarantine WHEN 1 THEN 100 ELSE 1000 END)
           OR NEW.epistemic_label IS NOT 'unverified';
END;

CREATE TABLE memory_classifications (
    classification_id        TEXT PRIMARY KEY,
    memory_id                TEXT NOT NULL REFERENCES memories (memory_id),
    company_id               TEXT NOT NULL,
    label                    TEXT NOT NULL CHECK (label IN ('unverified', 'supported', 'disputed',
                               'poison_suspect', 'poison_likely', 'poison_confirmed', 'poison_refuted')),
    confidence_milli         INTEGER NOT NULL CHECK (confidence_milli BETWEEN 0 AND 1000),
    basis                    TEXT NOT NULL CHECK (basis IN ('classifier', 'explicit')),
    live_content_hash        TEXT NOT NULL,
    authority_event_id       TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    authority_mutation_hash  TEXT NOT NULL,
    prev_classification_hash TEXT,
    classification_hash      TEXT NOT NULL UNIQUE,
    created_at               INTEGER NOT NULL
) STRICT;

CREATE INDEX memory_classifications_memory ON memory_classifications (memory_id);

CREATE TRIGGER memory_classifications_carried_judgment BEFORE INSERT ON memory_classifications
WHEN NEW.basis = 'classifier'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a corrected version may not be more trusting than the label it carries, and only a correction carries one')
        FROM (SELECT (SELECT json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.supersedes') FROM events e
                      WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'memory_saved'
                      ORDER BY e.rowid LIMIT 1) AS old_id) s
        WHERE aimos_carried_ok(
            (SELECT signed_body FROM events WHERE event_id = NEW.authority_event_id),
            NEW.label,
            s.old_id,
            (SELECT label FROM memory_classifications WHERE memory_id = s.old_id ORDER BY rowid DESC LIMIT 1),
            (SELECT classification_hash FROM memory_classifications WHERE memory_id = s.old_id
             ORDER BY rowid DESC LIMIT 1),
            (SELECT c.label FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id
             WHERE c.memory_id = NEW.memory_id AND c.basis = 'classifier'
               AND json_extract(e.signed_body, '$.metadata.signals.inherited_from') IS NOT NULL
               AND NOT EXISTS (
                 SELECT 1 FROM memory_classifications j JOIN events je ON je.event_id = j.authority_event_id
                 WHERE j.memory_id = NEW.memory_id AND j.rowid > c.rowid AND j.basis = 'explicit'
                   AND json_extract(je.signed_body, '$.metadata.evidence.master_signature_b64u') IS NOT NULL)
             ORDER BY c.rowid DESC LIMIT 1)) IS NOT 1;
END;

CREATE TRIGGER memory_classifications_judgment_stands BEFORE INSERT ON memory_classifications
WHEN NEW.basis = 'classifier'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a person judged this memory: the classifier may not label it again')
        WHERE EXISTS (SELECT 1 FROM memory_classifications
                      WHERE memory_id = NEW.memory_id AND basis = 'explicit');
END;

CREATE TRIGGER memory_classifications_no_delete BEFORE DELETE ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: classifications are append-only'); END;

CREATE TRIGGER memory_classifications_no_update BEFORE UPDATE ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: classifications are append-only'); END;

CREATE TRIGGER memory_classifications_seal_aware BEFORE INSERT ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER memory_classifications_verify_insert BEFORE INSERT ON memory_classifications
BEGIN
    SELECT RAISE(ABORT, 'aimos: a classification binds the memory''s live content')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m WHERE m.memory_id = NEW.memory_id
              AND m.company_id = NEW.company_id AND m.live_content_hash = NEW.live_content_hash);
    SELECT RAISE(ABORT, 'aimos: a classification needs the housekeeper''s signed authority event binding it')
        WHERE NOT EXISTS (
            SELECT 1 FROM events e JOIN identity_epochs i
              ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
            WHERE e.event_id = NEW.authority_event_id AND e.mutation_hash = NEW.authority_mutation_hash
              AND e.operation = 'memory_epistemic_classified' AND e.subject_memory_id = NEW.memory_id
              AND e.company_id = NEW.company_id AND i.role = 'housekeeper'
              AND json_extract(e.signed_body, '$.metadata.label') = NEW.label
              AND json_extract(e.signed_body, '$.metadata.confidence_milli') = NEW.confidence_milli
              AND json_extract(e.signed_body, '$.metadata.basis') = NEW.basis
              AND json_extract(e.signed_body, '$.metadata.live_content_hash') = NEW.live_content_hash
              AND json_extract(e.signed_body, '$.metadata.prev_classification_hash') IS NEW.prev_classification_hash
              AND aimos_ed25519_verify(i.public_key_b64u,
                    aimos_payload_message(e.signed_body, e.nonce, e.ts_signed), e.signature_b64u) = 1);
    SELECT RAISE(ABORT, 'aimos: a classification must chain to the memory''s newest one')
        WHERE NEW.prev_classification_hash IS NOT (
            SELECT classification_hash FROM memory_classifications WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: the classification hash does not recompute')
        WHERE NEW.classification_hash IS NOT aimos_epistemic_hash(
            NEW.memory_id, NEW.label, NEW.confidence_milli, NEW.live_content_hash,
            NEW.authority_mutation_hash, NEW.prev_classification_hash);
    SELECT RAISE(ABORT, 'aimos: a judgment that raises trust needs the master''s signature')
        WHERE NEW.basis = 'explicit' AND aimos_judgment_ok(
            (SELECT e.signed_body FROM events e WHERE e.event_id = NEW.authority_event_id),
            NEW.memory_id,
            COALESCE((SELECT label FROM memory_classifications WHERE memory_id = NEW.memory_id
                      ORDER BY rowid DESC LIMIT 1), 'unverified'),
            (SELECT public_key_b64u FROM master_identity)) IS NOT 1;
END;

CREATE VIRTUAL TABLE memory_context_fts USING fts5(
    text, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2 categories ''L* N* Co M*'''
);

CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2 categories ''L* N* Co M*'''
);

CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');

CREATE TABLE memory_occurrences (
    occurrence_id             TEXT PRIMARY KEY,
    memory_id                 TEXT NOT NULL REFERENCES memories (memory_id),
    company_id                TEXT NOT NULL,
    event_type                TEXT NOT NULL,
    live_content_hash         TEXT NOT NULL,
    agent_id                  TEXT NOT NULL,
    agent_valid_from          INTEGER NOT NULL,
    request_body_hash         TEXT NOT NULL,
    request_nonce             TEXT NOT NULL,
    request_ts                INTEGER NOT NULL,
    request_signature_b64u    TEXT NOT NULL,
    predecessor_commitment    TEXT,
    commitment                TEXT NOT NULL UNIQUE,
    signer_valid_from         INTEGER NOT NULL,
    signature_b64u            TEXT NOT NULL,
    created_at                INTEGER NOT NULL
) STRICT;

CREATE INDEX memory_occurrences_memory ON memory_occurrences (memory_id, created_at);

CREATE TRIGGER memory_occurrences_no_delete BEFORE DELETE ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: memory_occurrences is append-only'); END;

CREATE TRIGGER memory_occurrences_no_update BEFORE UPDATE ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: memory_occurrences is append-only'); END;

CREATE TRIGGER memory_occurrences_seal_aware BEFORE INSERT ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER memory_occurrences_verify_insert BEFORE INSERT ON memory_occurrences
BEGIN
    SELECT RAISE(ABORT, 'aimos: occurrence does not match its memory or its chain')
        WHERE NEW.live_content_hash IS NOT (
                SELECT live_content_hash FROM memories WHERE memory_id = NEW.memory_id)
           OR NEW.predecessor_commitment IS NOT (
                SELECT commitment FROM memory_occurrences WHERE memory_id = NEW.memory_id
                ORDER BY created_at DESC, rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: occurrence is not signed by the housekeeper')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from),
            aimos_occurrence_message(NEW.commitment),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE memory_provenance (
    provenance_id           TEXT PRIMARY KEY,
    memory_id               TEXT NOT NULL,
    company_id              TEXT NOT NULL,
    event_type              TEXT NOT NULL,
    body_json               TEXT NOT NULL,
    content_hash            TEXT NOT NULL,
    prev_mutation_hash      TEXT,
    mutation_hash           TEXT NOT NULL UNIQUE,
    nonce                   TEXT NOT NULL,
    ts_signed               INTEGER NOT NULL,
    signature_b64u          TEXT NOT NULL,
    signature_form          INTEGER NOT NULL CHECK (signature_form IN (1, 3)),
    signed_method           TEXT,
    signed_path             TEXT,
    signer_agent_id         TEXT NOT NULL,
    signer_valid_from       INTEGER NOT NULL,
    cert_fingerprint        TEXT NOT NULL,
    identity_tier           TEXT NOT NULL,
    is_genesis              INTEGER NOT NULL CHECK (is_genesis IN (0, 1)),
    backfilled              INTEGER NOT NULL DEFAULT 0 CHECK (backfilled = 0),
    binding_schema_version  INTEGER NOT NULL,
    created_at              INTEGER NOT NULL, body_deflated BLOB,
    CHECK ((is_genesis = 1) = (prev_mutation_hash IS NULL)),
    FOREIGN KEY (signer_agent_id, signer_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE INDEX memory_provenance_memory ON memory_provenance (memory_id, ts_signed);

CREATE UNIQUE INDEX memory_provenance_no_fork ON memory_provenance (prev_mutation_hash)
    WHERE prev_mutation_hash IS NOT NULL;

CREATE INDEX memory_provenance_signed_reweight
    ON memory_provenance (json_extract(body_json, '$.memory_id'))
    WHERE event_type = 'REWEIGHT' AND json_valid(body_json);

CREATE INDEX memory_provenance_supersedes ON memory_provenance (json_extract(body_json, '$.supersedes'))
    WHERE event_type = 'SAVE' AND json_extract(body_json, '$.supersedes') IS NOT NULL;

CREATE TRIGGER memory_provenance_known_kind BEFORE INSERT ON memory_provenance
WHEN NEW.event_type NOT IN ('SAVE', 'REWEIGHT')
BEGIN SELECT RAISE(ABORT, 'aimos: unknown provenance node type'); END;

CREATE TRIGGER memory_provenance_no_delete BEFORE DELETE ON memory_provenance
BEGIN SELECT RAISE(ABORT, 'aimos: memory_provenance is append-only'); END;

CREATE TRIGGER memory_provenance_no_update BEFORE UPDATE ON memory_provenance
BEGIN
    SELECT RAISE(ABORT, 'aimos: memory_provenance is append-only')
        WHERE NEW.provenance_id IS NOT OLD.provenance_id OR NEW.memory_id IS NOT OLD.memory_id
           OR NEW.company_id IS NOT OLD.company_id OR NEW.event_type IS NOT OLD.event_type
           OR NEW.content_hash IS NOT OLD.content_hash
           OR NEW.prev_mutation_hash IS NOT OLD.prev_mutation_hash
           OR NEW.mutation_hash IS NOT OLD.mutation_hash OR NEW.nonce IS NOT OLD.nonce
           OR NEW.ts_signed IS NOT OLD.ts_signed OR NEW.signature_b64u IS NOT OLD.signature_b64u
           OR NEW.signature_form IS NOT OLD.signature_form OR NEW.signed_method IS NOT OLD.signed_method
           OR NEW.signed_path IS NOT OLD.signed_path OR NEW.signer_agent_id IS NOT OLD.signer_agent_id
           OR NEW.signer_valid_from IS NOT OLD.signer_valid_from
           OR NEW.cert_fingerprint IS NOT OLD.cert_fingerprint OR NEW.identity_tier IS NOT OLD.identity_tier
           OR NEW.is_genesis IS NOT OLD.is_genesis OR NEW.backfilled IS NOT OLD.backfilled
           OR NEW.binding_schema_version IS NOT OLD.binding_schema_version
           OR NEW.created_at IS NOT OLD.created_at OR NEW.body_deflated IS NOT OLD.body_deflated
           OR OLD.event_type IS NOT 'SAVE'
           OR NOT EXISTS (
            SELECT 1 FROM memory_redactions r
            WHERE r.memory_id = OLD.memory_id
              AND json_extract(r.record_json, '$.save_provenance_id') = OLD.provenance_id
              AND NEW.body_json = CASE json_extract(r.record_json, '$.removed')
                  WHEN json_array('key', 'source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'), '$.key', json('null'))
                  WHEN json_array('source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'))
                  ELSE json_set(OLD.body_json, '$.value', json('null')) END);
END;

CREATE TRIGGER memory_provenance_reweight_insert BEFORE INSERT ON memory_provenance
WHEN NEW.event_type = 'REWEIGHT'
BEGIN
    SELECT RAISE(ABORT, 'aimos: REWEIGHT node must be signed in payload form, not backfilled, schema 2')
        WHERE NEW.signature_form IS NOT 1 OR NEW.backfilled IS NOT 0
           OR NEW.binding_schema_version IS NOT 2;
    SELECT RAISE(ABORT, 'aimos: REWEIGHT node signer is not the housekeeper, valid and unrevoked')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.cert_fingerprint = NEW.cert_fingerprint AND e.role = 'housekeeper'
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT body is not canonical or does not bind this memory')
        WHERE aimos_is_canonical(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated)) IS NOT 1
           OR NEW.company_id IS NOT (SELECT company_id FROM memories WHERE memory_id = NEW.memory_id)
           OR NEW.content_hash IS NOT aimos_sha256_hex(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated))
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.event_type') IS NOT 'REWEIGHT'
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.company_id') IS NOT NEW.company_id
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.memory_id') IS NOT NEW.memory_id
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: REWEIGHT predecessor is not the head of this memory''s REWEIGHT chain')
        WHERE NEW.prev_mutation_hash IS NOT (
            SELECT mutation_hash FROM memory_provenance
            WHERE memory_id = NEW.memory_id AND event_type = 'REWEIGHT'
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT aimos_provenance_mutation(
            NEW.content_hash, NEW.prev_mutation_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT signature does not verify under the housekeeper epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_payload_message(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TRIGGER memory_provenance_seal_aware BEFORE INSERT ON memory_provenance
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER memory_provenance_stored_form BEFORE INSERT ON memory_provenance
BEGIN
    SELECT RAISE(ABORT, 'aimos: a REWEIGHT node stores its body deflated, beside an empty text; a SAVE node stores it as text')
        WHERE (NEW.event_type = 'REWEIGHT') IS NOT (NEW.body_deflated IS NOT NULL AND NEW.body_json IS '');
END;

CREATE TRIGGER memory_provenance_verify_insert BEFORE INSERT ON memory_provenance
WHEN NEW.event_type = 'SAVE'
BEGIN
    SELECT RAISE(ABORT, 'aimos: only a SAVE genesis node signed in request form 3 for POST /aimos/save')
        WHERE NEW.is_genesis IS NOT 1
           OR NEW.signature_form IS NOT 3 OR NEW.signed_method IS NOT 'POST'
           OR NEW.signed_path IS NOT '/aimos/save';
    SELECT RAISE(ABORT, 'aimos: the system scope is the housekeeper''s alone, and the housekeeper saves only there')
        WHERE (json_extract(NEW.body_json, '$.scope') = 'system') IS NOT (NEW.signer_agent_id = 'housekeeper');
    SELECT RAISE(ABORT, 'aimos: provenance body is not canonical JSON')
        WHERE aimos_is_canonical(NEW.body_json) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: provenance content hash does not match its body')
        WHERE NEW.content_hash IS NOT aimos_sha256_hex(NEW.body_json)
           OR json_extract(NEW.body_json, '$.company_id') IS NOT NEW.company_id;
    SELECT RAISE(ABORT, 'aimos: a save needs its request nonce recorded for the same body')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.signer_agent_id AND n.nonce = NEW.nonce
              AND n.valid_from = NEW.signer_valid_from AND n.ts_signed = NEW.ts_signed
              AND n.signed_path = NEW.signed_path AND n.request_hash = NEW.content_hash);
    SELECT RAISE(ABORT, 'aimos: the signer is not an agent epoch valid and unrevoked at signing time')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.cert_fingerprint = NEW.cert_fingerprint AND e.role IN ('agent', 'housekeeper')
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: the signer''s grant does not allow this save')
        WHERE NOT EXISTS (
            SELECT 1 FROM (
                SELECT * FROM recall_grants g
                WHERE g.subject_agent_id = NEW.signer_agent_id
                  AND g.subject_valid_from = NEW.signer_valid_from
                ORDER BY g.rowid DESC LIMIT 1) g
            WHERE g.allowed = 1 AND g.write_allowed = 1 AND g.company_id = NEW.company_id
              AND json_extract(NEW.body_json, '$.clearance_level') <= g.clearance_ceiling
              AND (CASE json_extract(NEW.body_json, '$.data_class')
                     WHEN 'public' THEN 0 WHEN 'internal' THEN 1
                     WHEN 'confidential' THEN 2 WHEN 'restricted' THEN 3 END)
                  <= (CASE g.data_class_ceiling
                     WHEN 'public' THEN 0 WHEN 'internal' THEN 1
                     WHEN 'confidential' THEN 2 WHEN 'restricted' THEN 3 END));
    SELECT RAISE(ABORT, 'aimos: provenance mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT aimos_provenance_mutation(
            NEW.content_hash, NEW.prev_mutation_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: provenance signature does not verify under its signer epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_request_message(NEW.body_json, NEW.signed_method, NEW.signed_path,
                                  NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE memory_redactions (
    redaction_id    TEXT PRIMARY KEY,
    memory_id       TEXT NOT NULL UNIQUE REFERENCES memories (memory_id),
    company_id      TEXT NOT NULL,
    record_json     TEXT NOT NULL,
    signature_b64u  TEXT NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TRIGGER memory_redactions_no_delete BEFORE DELETE ON memory_redactions
BEGIN SELECT RAISE(ABORT, 'aimos: a redaction record is never removed'); END;

CREATE TRIGGER memory_redactions_no_update BEFORE UPDATE ON memory_redactions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_redactions is append-only'); END;

CREATE TRIGGER memory_redactions_verify_insert BEFORE INSERT ON memory_redactions
BEGIN
    SELECT RAISE(ABORT, 'aimos: a redaction record must be signed by this brain''s master and bind its columns')
        WHERE aimos_redaction_ok(
            NEW.record_json, NEW.signature_b64u, NEW.memory_id, NEW.company_id, NEW.created_at,
            NEW.redaction_id,
            (SELECT public_key_b64u FROM master_identity), (SELECT fingerprint FROM master_identity)) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: a redaction record binds the memory''s signed identity')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m
            WHERE m.memory_id = NEW.memory_id AND m.company_id = NEW.company_id
              AND m.live_content_hash = json_extract(NEW.record_json, '$.live_content_hash')
              AND m.save_mutation_hash = json_extract(NEW.record_json, '$.save_mutation_hash')
              AND m.save_provenance_id = json_extract(NEW.record_json, '$.save_provenance_id')
              AND m.rowid = json_extract(NEW.record_json, '$.rows[0].rowid'))
           OR NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.provenance_id = json_extract(NEW.record_json, '$.save_provenance_id')
              AND p.content_hash = json_extract(NEW.record_json, '$.save_content_hash')
              AND p.mutation_hash = json_extract(NEW.record_json, '$.save_mutation_hash')
              AND p.rowid = json_extract(NEW.record_json, '$.rows[1].rowid'));
END;

CREATE TABLE memory_supersessions (
    old_memory_id          TEXT PRIMARY KEY REFERENCES memories (memory_id),
    new_memory_id          TEXT NOT NULL UNIQUE REFERENCES memories (memory_id),
    company_id             TEXT NOT NULL,
    binding_mutation_hash  TEXT NOT NULL,
    created_at             INTEGER NOT NULL,
    CHECK (old_memory_id <> new_memory_id)
) STRICT;

CREATE TRIGGER memory_supersessions_carry_judgment BEFORE INSERT ON memory_supersessions
BEGIN
    SELECT RAISE(ABORT, 'aimos: a correction must carry the label of the version it corrects (disputed or poison)')
        WHERE aimos_correction_ok(
            (SELECT e.signed_body FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id
             WHERE c.memory_id = NEW.new_memory_id ORDER BY c.rowid DESC LIMIT 1),
            NEW.old_memory_id,
            (SELECT label FROM memory_classifications WHERE memory_id = NEW.old_memory_id
             ORDER BY rowid DESC LIMIT 1),
            (SELECT classification_hash FROM memory_classifications WHERE memory_id = NEW.old_memory_id
             ORDER BY rowid DESC LIMIT 1)) IS NOT 1;
END;

CREATE TRIGGER memory_supersessions_no_delete BEFORE DELETE ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_supersessions is append-only'); END;

CREATE TRIGGER memory_supersessions_no_update BEFORE UPDATE ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_supersessions is append-only'); END;

CREATE TRIGGER memory_supersessions_seal_aware BEFORE INSERT ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER memory_supersessions_verify_insert BEFORE INSERT ON memory_supersessions
BEGIN
    SELECT RAISE(ABORT, 'aimos: a supersession link must be bound by the new version''s signed save')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m JOIN memory_provenance p ON p.provenance_id = m.save_provenance_id
            WHERE m.memory_id = NEW.new_memory_id
              AND m.company_id = NEW.company_id
              AND p.mutation_hash = NEW.binding_mutation_hash
              AND json_extract(p.body_json, '$.supersedes') = NEW.old_memory_id)
        OR NOT EXISTS (
            SELECT 1 FROM memories WHERE memory_id = NEW.old_memory_id AND company_id = NEW.company_id);
END;

CREATE TRIGGER memory_supersessions_writer_only BEFORE INSERT ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TABLE memory_vectors (
    memory_rowid  INTEGER PRIMARY KEY,
    model         TEXT NOT NULL,
    vector        BLOB NOT NULL
) STRICT;

CREATE TRIGGER memory_vectors_of_a_memory BEFORE INSERT ON memory_vectors
BEGIN
    SELECT RAISE(ABORT, 'aimos: a vector belongs to a saved memory')
        WHERE NOT EXISTS (SELECT 1 FROM memories WHERE rowid = NEW.memory_rowid);
END;

CREATE TRIGGER memory_vectors_removed AFTER DELETE ON memory_vectors
BEGIN
    INSERT INTO memory_vectors_generation (id, generation) VALUES (1, 1)
        ON CONFLICT (id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER memory_vectors_replaced AFTER UPDATE ON memory_vectors
BEGIN
    INSERT INTO memory_vectors_generation (id, generation) VALUES (1, 1)
        ON CONFLICT (id) DO UPDATE SET generation = generation + 1;
END;

CREATE TABLE memory_vectors_generation (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    generation  INTEGER NOT NULL
) STRICT;

CREATE TABLE outcomes (
    outcome_id          TEXT PRIMARY KEY,
    company_id          TEXT NOT NULL,
    memory_id           TEXT NOT NULL REFERENCES memories (memory_id),
    receipt_id          TEXT NOT NULL REFERENCES recall_receipts (receipt_id),
    target_scope        TEXT NOT NULL CHECK (target_scope IN ('principal_state', 'occurrence_observation')),
    reward_sign         INTEGER NOT NULL CHECK (reward_sign IN (-1, 1)),
    live_content_hash   TEXT NOT NULL,
    agent_id            TEXT NOT NULL,
    agent_valid_from    INTEGER NOT NULL,
    request_body        TEXT NOT NULL,
    request_hash        TEXT NOT NULL,
    request_nonce       TEXT NOT NULL,
    request_ts          INTEGER NOT NULL,
    request_signature_b64u TEXT NOT NULL,
    terminal            TEXT NOT NULL CHECK (terminal IN ('authorized_transition', 'signed_noop', 'occurrence_observation')),
    created_at          INTEGER NOT NULL,
    UNIQUE (agent_id, request_nonce),
    CHECK ((target_scope = 'occurrence_observation') = (terminal = 'occurrence_observation')),
    FOREIGN KEY (agent_id, agent_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE INDEX outcomes_memory ON outcomes (memory_id, created_at);

CREATE TRIGGER outcomes_no_delete BEFORE DELETE ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: outcomes are append-only'); END;

CREATE TRIGGER outcomes_no_update BEFORE UPDATE ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: outcomes are append-only'); END;

CREATE TRIGGER outcomes_one_weight_bearing_per_disclosure BEFORE INSERT ON outcomes
WHEN NEW.target_scope = 'principal_state' AND NEW.terminal = 'authorized_transition'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a further outcome about the same disclosure has no weight authority')
        WHERE EXISTS (
            SELECT 1 FROM outcomes o
            WHERE o.memory_id = NEW.memory_id AND o.receipt_id = NEW.receipt_id
              AND o.agent_id = NEW.agent_id AND o.target_scope = 'principal_state');
END;

CREATE TRIGGER outcomes_seal_aware BEFORE INSERT ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER outcomes_verify_insert BEFORE INSERT ON outcomes
BEGIN
    SELECT RAISE(ABORT, 'aimos: an outcome needs its verified request (nonce, hash, signature)')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.agent_id AND n.valid_from = NEW.agent_valid_from
              AND n.nonce = NEW.request_nonce AND n.ts_signed = NEW.request_ts
              AND n.signed_path = '/aimos/outcome' AND n.request_hash = NEW.request_hash)
           OR NEW.request_hash IS NOT aimos_sha256_hex(NEW.request_body)
           OR aimos_is_canonical(NEW.request_body) IS NOT 1
           OR aimos_ed25519_verify(
                (SELECT public_key_b64u FROM identity_epochs
                 WHERE agent_id = NEW.agent_id AND valid_from = NEW.agent_valid_from),
                aimos_request_message(NEW.request_body, 'POST', '/aimos/outcome', NEW.request_nonce,
                                      NEW.request_ts),
                NEW.request_signature_b64u) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: an outcome must name the memory, receipt, sign and scope its request body says')
        WHERE json_extract(NEW.request_body, '$.memory_id') IS NOT NEW.memory_id
           OR json_extract(NEW.request_body, '$.receipt_id') IS NOT NEW.receipt_id
           OR COALESCE(json_extract(NEW.request_body, '$.target_scope'), 'principal_state') IS NOT NEW.target_scope
           OR (CASE json_extract(NEW.request_body, '$.outcome') WHEN 'good' THEN 1 WHEN 'bad' THEN -1 END)
                IS NOT NEW.reward_sign;
    SELECT RAISE(ABORT, 'aimos: an outcome needs the housekeeper''s mutation_outcome_evidence_v2 event')
        WHERE NOT EXISTS (
            SELECT 1 FROM (
                SELECT aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated) AS body FROM events e
                WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'mutation_outcome_evidence_v2'
                ORDER BY e.rowid DESC LIMIT 1) n
            WHERE json_extract(n.body, '$.metadata.outcome_id') = NEW.outcome_id
              AND json_extract(n.body, '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(n.body, '$.metadata.target_scope') = NEW.target_scope
              AND json_extract(n.body, '$.metadata.reward_sign') = NEW.reward_sign);
    SELECT RAISE(ABORT, 'aimos: the receipt did not disclose this memory with this content to this agent')
        WHERE NOT EXISTS (
            SELECT 1 FROM recall_receipts r, json_each(r.evidence) e
            WHERE r.receipt_id = NEW.receipt_id AND r.agent_id = NEW.agent_id
              AND json_extract(e.value, '$.memory_id') = NEW.memory_id
              AND json_extract(e.value, '$.live_content_hash') = NEW.live_content_hash);
END;

CREATE TABLE recall_grants (
    grant_id            TEXT PRIMARY KEY,
    company_id          TEXT NOT NULL,
    subject_agent_id    TEXT NOT NULL,
    subject_valid_from  INTEGER NOT NULL,
    allowed             INTEGER NOT NULL,
    write_allowed       INTEGER NOT NULL,
    clearance_ceiling   INTEGER NOT NULL CHECK (clearance_ceiling BETWEEN 0 AND 12),
    data_class_ceiling  TEXT NOT NULL
        CHECK (data_class_ceiling IN ('public', 'internal', 'confidential', 'restricted')),
    reason              TEXT NOT NULL,
    master_fingerprint  TEXT NOT NULL,
    signed_body         TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL,
    prev_mutation_hash  TEXT,
    mutation_hash       TEXT NOT NULL UNIQUE,
    FOREIGN KEY (subject_agent_id, subject_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE INDEX recall_grants_subject ON recall_grants (subject_agent_id, subject_valid_from, ts_signed);

CREATE TRIGGER recall_grants_no_delete BEFORE DELETE ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: recall_grants is append-only'); END;

CREATE TRIGGER recall_grants_no_update BEFORE UPDATE ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: recall_grants is append-only'); END;

CREATE TRIGGER recall_grants_seal_aware BEFORE INSERT ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER recall_grants_verify_insert BEFORE INSERT ON recall_grants
BEGIN
    SELECT RAISE(ABORT, 'aimos: grant content hash or mutation hash does not recompute')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1
           OR NEW.content_hash IS NOT aimos_sha256_hex(NEW.signed_body)
           OR NEW.mutation_hash IS NOT aimos_grant_mutation(
                NEW.prev_mutation_hash, NEW.content_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: grant fields differ from its signed body')
        WHERE json_extract(NEW.signed_body, '$.schema') IS NOT 'hom.aimos.recall-authorization/v1'
           OR json_extract(NEW.signed_body, '$.subject_agent_id') IS NOT NEW.subject_agent_id
           OR aimos_iso_seconds(json_extract(NEW.signed_body, '$.subject_valid_from'))
                IS NOT NEW.subject_valid_from
           OR json_extract(NEW.signed_body, '$.clearance_ceiling') IS NOT NEW.clearance_ceiling
           OR json_extract(NEW.signed_body, '$.data_class_ceiling') IS NOT NEW.data_class_ceiling
           OR json_extract(NEW.signed_body, '$.allowed') IS NOT NEW.allowed
           OR json_extract(NEW.signed_body, '$.write_allowed') IS NOT NEW.write_allowed
           OR json_extract(NEW.signed_body, '$.company_id') IS NOT NEW.company_id
           OR json_extract(NEW.signed_body, '$.master_fingerprint') IS NOT NEW.master_fingerprint
           OR json_extract(NEW.signed_body, '$.reason') IS NOT NEW.reason
           OR json_extract(NEW.signed_body, '$.prev_mutation_hash') IS NOT NEW.prev_mutation_hash
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: grant predecessor is not the current grant of this epoch')
        WHERE NEW.prev_mutation_hash IS NOT (
            SELECT mutation_hash FROM recall_grants
            WHERE subject_agent_id = NEW.subject_agent_id
              AND subject_valid_from = NEW.subject_valid_from
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: grant is not signed by the master')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM master_identity WHERE fingerprint = NEW.master_fingerprint),
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE recall_receipts (
    receipt_id            TEXT PRIMARY KEY,
    company_id            TEXT NOT NULL,
    agent_id              TEXT NOT NULL,
    agent_valid_from      INTEGER NOT NULL,
    request_body          TEXT NOT NULL,
    request_hash          TEXT NOT NULL,
    request_nonce         TEXT NOT NULL,
    request_ts            INTEGER NOT NULL,
    request_signature_b64u TEXT NOT NULL,
    command               TEXT NOT NULL,
    command_hash          TEXT NOT NULL,
    grant_mutation_hash   TEXT NOT NULL,
    merkle_root           TEXT NOT NULL,
    result_count          INTEGER NOT NULL,
    evidence              TEXT NOT NULL,
    decision              TEXT NOT NULL,
    decision_sha256       TEXT NOT NULL,
    event_id              TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    created_at            INTEGER NOT NULL, decision_deflated BLOB,
    FOREIGN KEY (agent_id, agent_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;

CREATE INDEX recall_receipts_created ON recall_receipts (created_at);

CREATE TRIGGER recall_receipts_decision_form BEFORE INSERT ON recall_receipts
BEGIN
    SELECT RAISE(ABORT, 'aimos: a receipt stores its decision deflated, beside an empty text, inflating to the decision its hash names')
        WHERE NEW.decision_deflated IS NULL OR NEW.decision IS NOT ''
           OR aimos_sha256_hex(aimos_inflate(NEW.decision_deflated)) IS NOT NEW.decision_sha256;
END;

CREATE TRIGGER recall_receipts_no_delete BEFORE DELETE ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: recall_receipts is append-only'); END;

CREATE TRIGGER recall_receipts_no_update BEFORE UPDATE ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: recall_receipts is append-only'); END;

CREATE TRIGGER recall_receipts_seal_aware BEFORE INSERT ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER recall_receipts_verify_insert BEFORE INSERT ON recall_receipts
BEGIN
    SELECT RAISE(ABORT, 'aimos: a receipt needs its recall request nonce and its signed recall_receipt event')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.agent_id AND n.nonce = NEW.request_nonce
              AND n.request_hash = NEW.request_hash AND n.signed_path = '/aimos/recall')
        OR NOT EXISTS (
            SELECT 1 FROM events e
            WHERE e.event_id = NEW.event_id AND e.operation = 'recall_receipt'
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.receipt_id') = NEW.receipt_id
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.merkle_root') = NEW.merkle_root
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.command_hash') = NEW.command_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.grant_mutation_hash') = NEW.grant_mutation_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.result_count') = NEW.result_count
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.decision_sha256') = NEW.decision_sha256);
    SELECT RAISE(ABORT, 'aimos: receipt Merkle root or command hash does not recompute')
        WHERE aimos_merkle_root(NEW.evidence) IS NOT NEW.merkle_root
           OR aimos_sha256_hex(NEW.command) IS NOT NEW.command_hash
           OR aimos_is_canonical(NEW.command) IS NOT 1;
END;

CREATE TABLE request_nonces (
    agent_id      TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    valid_from    INTEGER NOT NULL,
    ts_signed     INTEGER NOT NULL,
    signed_path   TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    received_at   INTEGER NOT NULL,
    PRIMARY KEY (agent_id, nonce)
) STRICT;

CREATE TRIGGER request_nonces_no_delete BEFORE DELETE ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: request_nonces is append-only'); END;

CREATE TRIGGER request_nonces_no_update BEFORE UPDATE ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: request_nonces is append-only'); END;

CREATE TRIGGER request_nonces_seal_aware BEFORE INSERT ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER request_nonces_writer_only BEFORE INSERT ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TABLE schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    applied_at  INTEGER NOT NULL
) STRICT;

CREATE TRIGGER schema_migrations_no_delete BEFORE DELETE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: schema_migrations is append-only'); END;

CREATE TRIGGER schema_migrations_no_update BEFORE UPDATE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: schema_migrations is append-only'); END;

CREATE TRIGGER schema_migrations_seal_aware BEFORE INSERT ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER schema_migrations_writer_only BEFORE INSERT ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TABLE seal_heads (
    table_name  TEXT PRIMARY KEY,
    row_count   INTEGER NOT NULL CHECK (row_count >= 0),
    max_rowid   INTEGER NOT NULL CHECK (max_rowid >= 0),
    chain       BLOB NOT NULL CHECK (length(chain) = 32),
    seq         INTEGER NOT NULL
) STRICT;

CREATE TRIGGER seal_heads_no_delete BEFORE DELETE ON seal_heads
BEGIN SELECT RAISE(ABORT, 'aimos: seal_heads only move forward'); END;

CREATE TRIGGER seal_heads_writer_only_insert BEFORE INSERT ON seal_heads
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

CREATE TRIGGER seal_heads_writer_only_update BEFORE UPDATE ON seal_heads
BEGIN
    SELECT RAISE(ABORT, 'aimos: only the writer moves a seal head, and only forward')
        WHERE aimos_sha256_hex('') IS NULL OR NEW.table_name IS NOT OLD.table_name
           OR NEW.row_count < OLD.row_count OR NEW.max_rowid < OLD.max_rowid OR NEW.seq <= OLD.seq;
END;

CREATE TABLE weight_baselines (
    memory_id               TEXT PRIMARY KEY REFERENCES memories (memory_id),
    company_id              TEXT NOT NULL,
    live_content_hash       TEXT NOT NULL,
    observed_weight_float4  TEXT NOT NULL,
    observed_weight_milli   INTEGER NOT NULL CHECK (observed_weight_milli BETWEEN 100 AND 3000),
    observed_at             INTEGER NOT NULL,
    attestation_reason      TEXT NOT NULL CHECK (attestation_reason = 'retained_nondefault_weight_baseline'),
    signer_valid_from       INTEGER NOT NULL,
    certificate_fingerprint TEXT NOT NULL,
    event_id                TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    event_mutation_hash     TEXT NOT NULL,
    baseline_hash           TEXT NOT NULL UNIQUE,
    signature_b64u          TEXT NOT NULL
) STRICT;

CREATE TRIGGER weight_baselines_no_delete BEFORE DELETE ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: weight_baselines is append-only'); END;

CREATE TRIGGER weight_baselines_no_update BEFORE UPDATE ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: weight_baselines is append-only'); END;

CREATE TRIGGER weight_baselines_seal_aware BEFORE INSERT ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER weight_baselines_verify_insert BEFORE INSERT ON weight_baselines
BEGIN
    SELECT RAISE(ABORT, 'aimos: a baseline needs its signed cognitive_initial_weight_attested event')
        WHERE NOT EXISTS (
            SELECT 1 FROM events e
            WHERE e.event_id = NEW.event_id AND e.mutation_hash = NEW.event_mutation_hash
              AND e.operation = 'cognitive_initial_weight_attested' AND e.signer_agent_id = 'housekeeper'
              AND e.signer_valid_from = NEW.signer_valid_from
              AND json_extract(e.signed_body, '$.key') = NEW.memory_id
              AND json_extract(e.signed_body, '$.metadata.weight_milli') = NEW.observed_weight_milli
              AND json_extract(e.signed_body, '$.metadata.memory_content_hash') = NEW.live_content_hash)
           OR NEW.live_content_hash IS NOT (SELECT live_content_hash FROM memories WHERE memory_id = NEW.memory_id);
    SELECT RAISE(ABORT, 'aimos: baseline hash or housekeeper signature does not verify')
        WHERE NEW.baseline_hash IS NOT aimos_baseline_hash(
                NEW.company_id, NEW.memory_id, NEW.event_id, NEW.event_mutation_hash, NEW.live_content_hash,
                NEW.observed_weight_float4, NEW.observed_weight_milli, NEW.observed_at, NEW.signer_valid_from,
                NEW.certificate_fingerprint)
           OR aimos_ed25519_verify(
                (SELECT public_key_b64u FROM identity_epochs
                 WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from),
                unhex(NEW.baseline_hash), NEW.signature_b64u) IS NOT 1;
END;

CREATE TABLE weight_projections (
    projection_id              TEXT PRIMARY KEY,
    company_id                 TEXT NOT NULL,
    memory_id                  TEXT NOT NULL REFERENCES memories (memory_id),
    outcome_id                 TEXT NOT NULL UNIQUE REFERENCES outcomes (outcome_id),
    old_weight_milli           INTEGER NOT NULL,
    new_weight_milli           INTEGER NOT NULL,
    provenance_mutation_hash   TEXT NOT NULL UNIQUE,
    prev_projection_hash       TEXT,
    projection_hash            TEXT NOT NULL UNIQUE,
    transition_hash            TEXT NOT NULL,
    transition_signature_b64u  TEXT NOT NULL,
    signer_valid_from          INTEGER NOT NULL,
    created_at                 INTEGER NOT NULL
) STRICT;

CREATE INDEX weight_projections_memory ON weight_projections (memory_id, created_at);

CREATE UNIQUE INDEX weight_projections_no_fork ON weight_projections (prev_projection_hash)
    WHERE prev_projection_hash IS NOT NULL;

CREATE UNIQUE INDEX weight_projections_one_genesis ON weight_projections (memory_id)
    WHERE prev_projection_hash IS NULL;

CREATE TRIGGER weight_projections_no_delete BEFORE DELETE ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: weight_projections is append-only'); END;

CREATE TRIGGER weight_projections_no_update BEFORE UPDATE ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: weight_projections is append-only'); END;

CREATE TRIGGER weight_projections_seal_aware BEFORE INSERT ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

CREATE TRIGGER weight_projections_verify_insert BEFORE INSERT ON weight_projections
BEGIN
    SELECT RAISE(ABORT, 'aimos: transition_scope: the signer is not the housekeeper, active and unrevoked')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = 'housekeeper' AND e.valid_from = NEW.signer_valid_from
              AND e.role = 'housekeeper' AND NEW.created_at BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = 'housekeeper' AND r.agent_valid_from = NEW.signer_valid_from);
    SELECT RAISE(ABORT, 'aimos: transition_company: the transition is not in the memory''s company')
        WHERE NEW.company_id IS NOT (SELECT company_id FROM memories WHERE memory_id = NEW.memory_id);
    SELECT RAISE(ABORT, 'aimos: transition_bounds: weights must be 100..3000 and differ')
        WHERE NEW.old_weight_milli NOT BETWEEN 100 AND 3000
           OR NEW.new_weight_milli NOT BETWEEN 100 AND 3000
           OR NEW.old_weight_milli = NEW.new_weight_milli;
    SELECT RAISE(ABORT, 'aimos: transition_provenance: not the terminal REWEIGHT node binding this company, memory and weights')
        WHERE NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.mutation_hash = NEW.provenance_mutation_hash AND p.event_type = 'REWEIGHT'
              AND p.backfilled = 0 AND p.memory_id = NEW.memory_id AND p.company_id = NEW.company_id
              AND p.signer_agent_id = 'housekeeper' AND p.signer_valid_from = NEW.signer_valid_from
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.old_weight_milli') = NEW.old_weight_milli
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.new_weight_milli') = NEW.new_weight_milli
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.outcome_id') = NEW.outcome_id)
           OR NEW.provenance_mutation_hash IS NOT (
            SELECT mutation_hash FROM memory_provenance
            WHERE memory_id = NEW.memory_id AND event_type = 'REWEIGHT'
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: transition_signature: the housekeeper signature over t_i does not verify')
        WHERE NEW.transition_hash IS NOT aimos_transition_hash(
                NEW.company_id, NEW.memory_id, NEW.old_weight_milli, NEW.new_weight_milli,
                NEW.provenance_mutation_hash)
           OR aimos_ed25519_verify(
                (SELECT public_key_b64u FROM identity_epochs
                 WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from),
                unhex(NEW.transition_hash), NEW.transition_signature_b64u) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: transition_predecessor: prev is not the head of this memory''s chain')
        WHERE NEW.prev_projection_hash IS NOT (
            SELECT projection_hash FROM weight_projections WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: transition_live_weight: the live weight is not the old weight')
        WHERE NEW.old_weight_milli IS NOT (
            SELECT retrieval_weight_milli FROM memories WHERE memory_id = NEW.memory_id);
    SELECT RAISE(ABORT, 'aimos: transition_genesis: a first transition starts at 1000 or at a signed baseline')
        WHERE NEW.prev_projection_hash IS NULL
          AND NEW.old_weight_milli IS NOT COALESCE(
            (SELECT observed_weight_milli FROM weight_baselines WHERE memory_id = NEW.memory_id), 1000);
    SELECT RAISE(ABORT, 'aimos: transition_hash: h_i does not recompute')
        WHERE NEW.projection_hash IS NOT aimos_projection_hash(
            NEW.memory_id, NEW.old_weight_milli, NEW.new_weight_milli, NEW.provenance_mutation_hash,
            NEW.prev_projection_hash);
    SELECT RAISE(ABORT, 'aimos: transition_outcome: the outcome is not principal-state evidence on this memory')
        WHERE NOT EXISTS (
            SELECT 1 FROM outcomes o
            WHERE o.outcome_id = NEW.outcome_id AND o.memory_id = NEW.memory_id
              AND o.target_scope = 'principal_state' AND o.terminal = 'authorized_transition');
END;
