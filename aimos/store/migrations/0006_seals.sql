-- aimos brain schema, migration 6: the seal chain that accounts for every retained row, and the
-- signed record of a restore.
--
-- Each write transaction ends with one housekeeper-signed seal (aimos/store/seals.py): for every
-- table it added rows to, the table's row count, highest rowid and chain hash (the previous chain
-- folded with the hashes of the new rows, in rowid order); the state root over every table; and
-- the link to the previous seal. `aimos verify` re-hashes every row against the seals, so an edit,
-- a deletion or an injected row of any retained table is found and named, and the newest seal is
-- anchored outside the brain (freshness-<brain id>.json beside anchors.json), so a rollback is found too.
-- seal_heads is the newest (count, rowid, chain) per table, kept so a write need not replay every
-- seal; it is checked against the newest seal's signed state root whenever it is used.

CREATE TABLE brain_seals (
    seq                INTEGER PRIMARY KEY CHECK (seq >= 1),
    sealed_at          INTEGER NOT NULL,
    signer_valid_from  INTEGER NOT NULL,
    prev_link          BLOB NOT NULL CHECK (length(prev_link) = 32),
    state_root         BLOB NOT NULL CHECK (length(state_root) = 32),
    changes            BLOB NOT NULL,
    signature          BLOB NOT NULL CHECK (length(signature) = 64)
) STRICT;

CREATE TABLE seal_heads (
    table_name  TEXT PRIMARY KEY,
    row_count   INTEGER NOT NULL CHECK (row_count >= 0),
    max_rowid   INTEGER NOT NULL CHECK (max_rowid >= 0),
    chain       BLOB NOT NULL CHECK (length(chain) = 32),
    seq         INTEGER NOT NULL
) STRICT;

-- `aimos restore BACKUP`: the master's signed record that the brain went back to a backup, with
-- what the replaced brain held beyond it (canonical JSON, `aimos.brain-restore/v1`).
CREATE TABLE brain_restores (
    restore_id          TEXT PRIMARY KEY,
    signed_body         TEXT NOT NULL,
    master_fingerprint  TEXT NOT NULL,
    nonce               TEXT NOT NULL,
    ts_signed           INTEGER NOT NULL,
    signature_b64u      TEXT NOT NULL
) STRICT;

CREATE TRIGGER brain_seals_no_update BEFORE UPDATE ON brain_seals
BEGIN SELECT RAISE(ABORT, 'aimos: brain_seals is append-only'); END;
CREATE TRIGGER brain_seals_no_delete BEFORE DELETE ON brain_seals
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

CREATE TRIGGER brain_restores_no_update BEFORE UPDATE ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: brain_restores is append-only'); END;
CREATE TRIGGER brain_restores_no_delete BEFORE DELETE ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: brain_restores is append-only'); END;
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

-- Tables whose insert check needed no registered function took rows from any connection, and a
-- plain connection's REPLACE (which deletes the old row without firing the delete guard when
-- recursive triggers are off) could swap their rows: now only the writer appends to them.
CREATE TRIGGER memory_supersessions_writer_only BEFORE INSERT ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;
CREATE TRIGGER epistemic_fingerprints_writer_only BEFORE INSERT ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: only the writer appends') WHERE aimos_sha256_hex('') IS NULL; END;

-- Rows are sealed by the writer that knows seals: an aimos from before this migration (a
-- housekeeper still running the old code after an upgrade) cannot append rows it would leave
-- unsealed. aimos_seal_aware() exists only in writers that seal.
CREATE TRIGGER schema_migrations_seal_aware BEFORE INSERT ON schema_migrations
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER brain_meta_seal_aware BEFORE INSERT ON brain_meta
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER master_identity_seal_aware BEFORE INSERT ON master_identity
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER identity_epochs_seal_aware BEFORE INSERT ON identity_epochs
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER recall_grants_seal_aware BEFORE INSERT ON recall_grants
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER agent_revocations_seal_aware BEFORE INSERT ON agent_revocations
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER request_nonces_seal_aware BEFORE INSERT ON request_nonces
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER memory_provenance_seal_aware BEFORE INSERT ON memory_provenance
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER memories_seal_aware BEFORE INSERT ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER memory_supersessions_seal_aware BEFORE INSERT ON memory_supersessions
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER memory_occurrences_seal_aware BEFORE INSERT ON memory_occurrences
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER events_seal_aware BEFORE INSERT ON events
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER recall_receipts_seal_aware BEFORE INSERT ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER outcomes_seal_aware BEFORE INSERT ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER weight_projections_seal_aware BEFORE INSERT ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER weight_baselines_seal_aware BEFORE INSERT ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER memory_classifications_seal_aware BEFORE INSERT ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER epistemic_fingerprints_seal_aware BEFORE INSERT ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
CREATE TRIGGER brain_restores_seal_aware BEFORE INSERT ON brain_restores
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;
