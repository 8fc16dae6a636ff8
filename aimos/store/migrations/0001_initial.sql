-- aimos brain schema, migration 1: identities, grants, revocations, nonces, memories,
-- provenance, supersession, occurrences and the signed event ledger.
-- Retained tables are append-only (BEFORE UPDATE / BEFORE DELETE abort). Insert triggers
-- call functions that only the writer registers (aimos_*), so a connection without them
-- (the sqlite3 shell) cannot append to the signed tables.

CREATE TABLE schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    applied_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE brain_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE master_identity (
    fingerprint     TEXT PRIMARY KEY,
    public_key_b64u TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL
) STRICT;

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
    created_at              INTEGER NOT NULL,
    CHECK ((is_genesis = 1) = (prev_mutation_hash IS NULL)),
    FOREIGN KEY (signer_agent_id, signer_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;
CREATE INDEX memory_provenance_memory ON memory_provenance (memory_id, ts_signed);
CREATE UNIQUE INDEX memory_provenance_no_fork ON memory_provenance (prev_mutation_hash)
    WHERE prev_mutation_hash IS NOT NULL;

CREATE TABLE memories (
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
    epistemic_label         TEXT NOT NULL,
    UNIQUE (company_id, live_content_hash)
) STRICT;
CREATE INDEX memories_created ON memories (company_id, created_at);

CREATE TABLE memory_supersessions (
    old_memory_id          TEXT PRIMARY KEY REFERENCES memories (memory_id),
    new_memory_id          TEXT NOT NULL UNIQUE REFERENCES memories (memory_id),
    company_id             TEXT NOT NULL,
    binding_mutation_hash  TEXT NOT NULL,
    created_at             INTEGER NOT NULL,
    CHECK (old_memory_id <> new_memory_id)
) STRICT;

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
    mutation_hash       TEXT NOT NULL UNIQUE,
    UNIQUE (signer_agent_id, signer_valid_from, ledger_seq),
    FOREIGN KEY (signer_agent_id, signer_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;
CREATE INDEX events_operation ON events (operation, ts_signed);
CREATE INDEX events_subject ON events (subject_memory_id) WHERE subject_memory_id IS NOT NULL;

-- ---------------------------------------------------------------------------------------
-- Append-only: no retained row is ever updated or deleted (the purge ceremony removes the
-- whole file instead).
CREATE TRIGGER schema_migrations_no_update BEFORE UPDATE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: schema_migrations is append-only'); END;
CREATE TRIGGER schema_migrations_no_delete BEFORE DELETE ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: schema_migrations is append-only'); END;
CREATE TRIGGER brain_meta_no_update BEFORE UPDATE ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: brain_meta is append-only'); END;
CREATE TRIGGER brain_meta_no_delete BEFORE DELETE ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: brain_meta is append-only'); END;
CREATE TRIGGER master_identity_no_update BEFORE UPDATE ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: master_identity is append-only'); END;
CREATE TRIGGER master_identity_no_delete BEFORE DELETE ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: master_identity is append-only'); END;
CREATE TRIGGER identity_epochs_no_update BEFORE UPDATE ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: identity_epochs is append-only'); END;
CREATE TRIGGER identity_epochs_no_delete BEFORE DELETE ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: identity_epochs is append-only'); END;
CREATE TRIGGER recall_grants_no_update BEFORE UPDATE ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: recall_grants is append-only'); END;
CREATE TRIGGER recall_grants_no_delete BEFORE DELETE ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: recall_grants is append-only'); END;
CREATE TRIGGER agent_revocations_no_update BEFORE UPDATE ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: agent_revocations is append-only'); END;
CREATE TRIGGER agent_revocations_no_delete BEFORE DELETE ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: agent_revocations is append-only'); END;
CREATE TRIGGER request_nonces_no_update BEFORE UPDATE ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: request_nonces is append-only'); END;
CREATE TRIGGER request_nonces_no_delete BEFORE DELETE ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: request_nonces is append-only'); END;
CREATE TRIGGER memory_provenance_no_update BEFORE UPDATE ON memory_provenance
BEGIN SELECT RAISE(ABORT, 'aimos: memory_provenance is append-only'); END;
CREATE TRIGGER memory_provenance_no_delete BEFORE DELETE ON memory_provenance
BEGIN SELECT RAISE(ABORT, 'aimos: memory_provenance is append-only'); END;
-- memories: the live weight and label become updatable (tied to their chains) only when the
-- writers for those chains exist; until then every column is fixed.
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead'); END;
CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: memories are never deleted; only the purge ceremony removes a brain'); END;
CREATE TRIGGER memory_supersessions_no_update BEFORE UPDATE ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_supersessions is append-only'); END;
CREATE TRIGGER memory_supersessions_no_delete BEFORE DELETE ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_supersessions is append-only'); END;
CREATE TRIGGER memory_occurrences_no_update BEFORE UPDATE ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: memory_occurrences is append-only'); END;
CREATE TRIGGER memory_occurrences_no_delete BEFORE DELETE ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: memory_occurrences is append-only'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'aimos: events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'aimos: events are append-only'); END;

-- ---------------------------------------------------------------------------------------
-- Insert checks through the writer's registered functions.
-- Tables without a signature of their own still take rows only from the writer.
CREATE TRIGGER schema_migrations_writer_only BEFORE INSERT ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;
CREATE TRIGGER brain_meta_writer_only BEFORE INSERT ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;
CREATE TRIGGER request_nonces_writer_only BEFORE INSERT ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;
CREATE TRIGGER master_identity_verify_insert BEFORE INSERT ON master_identity
BEGIN
    SELECT RAISE(ABORT, 'aimos: a brain has exactly one master identity')
        WHERE EXISTS (SELECT 1 FROM master_identity);
    SELECT RAISE(ABORT, 'aimos: master fingerprint does not match its public key')
        WHERE NEW.fingerprint IS NOT aimos_fingerprint(NEW.public_key_b64u);
END;

CREATE TRIGGER events_verify_insert BEFORE INSERT ON events
BEGIN
    SELECT RAISE(ABORT, 'aimos: event body is not canonical JSON')
        WHERE aimos_is_canonical(NEW.signed_body) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: event content hash does not match its body')
        WHERE NEW.content_hash IS NOT aimos_sha256_hex(NEW.signed_body);
    SELECT RAISE(ABORT, 'aimos: event fields differ from its signed body')
        WHERE json_extract(NEW.signed_body, '$.event_id') IS NOT NEW.event_id
           OR json_extract(NEW.signed_body, '$.company_id') IS NOT NEW.company_id
           OR json_extract(NEW.signed_body, '$.operation') IS NOT NEW.operation
           OR json_extract(NEW.signed_body, '$.signer_agent_id') IS NOT NEW.signer_agent_id
           OR aimos_iso_seconds(json_extract(NEW.signed_body, '$.signer_valid_from'))
                IS NOT NEW.signer_valid_from
           OR json_extract(NEW.signed_body, '$.subject_memory_id') IS NOT NEW.subject_memory_id
           OR json_extract(NEW.signed_body, '$.ledger_seq') IS NOT NEW.ledger_seq
           OR json_extract(NEW.signed_body, '$.prev_mutation_hash') IS NOT NEW.prev_mutation_hash
           OR json_extract(NEW.signed_body, '$.ts_signed') IS NOT NEW.ts_signed;
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
            aimos_payload_message(NEW.signed_body, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

-- This schema knows one node: the agent-signed SAVE genesis. Later node types come with the
-- migrations of the writers that append them (they replace this guard).
CREATE TRIGGER memory_provenance_known_kind BEFORE INSERT ON memory_provenance
WHEN NEW.event_type IS NOT 'SAVE'
BEGIN SELECT RAISE(ABORT, 'aimos: unknown provenance node type'); END;

CREATE TRIGGER memory_provenance_verify_insert BEFORE INSERT ON memory_provenance
WHEN NEW.event_type = 'SAVE'
BEGIN
    SELECT RAISE(ABORT, 'aimos: only a SAVE genesis node signed in request form 3 for POST /aimos/save')
        WHERE NEW.is_genesis IS NOT 1
           OR NEW.signature_form IS NOT 3 OR NEW.signed_method IS NOT 'POST'
           OR NEW.signed_path IS NOT '/aimos/save';
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
              AND e.cert_fingerprint = NEW.cert_fingerprint AND e.role = 'agent'
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
              AND json_extract(e.signed_body, '$.metadata.save_mutation_hash') = NEW.save_mutation_hash
              AND json_extract(e.signed_body, '$.metadata.live_content_hash') = NEW.live_content_hash
              AND json_extract(e.signed_body, '$.metadata.retained_quarantine') = NEW.quarantine);
    SELECT RAISE(ABORT, 'aimos: a new memory starts at weight 1.000 (0.100 in quarantine) and unverified')
        WHERE NEW.retrieval_weight_milli IS NOT (CASE NEW.quarantine WHEN 1 THEN 100 ELSE 1000 END)
           OR NEW.epistemic_label IS NOT 'unverified';
END;

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
