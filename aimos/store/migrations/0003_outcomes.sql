-- aimos brain schema, migration 3: outcome evidence and authorized reweighting (MutMem 4-6).
--
-- An outcome is agent-signed evidence about a memory a recall receipt disclosed. A weight
-- change is a housekeeper-signed REWEIGHT provenance node plus a projection row carrying the
-- chain hash h_i (`aimos.cwc/v1`) and the housekeeper's signature over the transition
-- commitment t_i (`aimos.cognitive-transition/v2`). The projection's insert trigger checks every
-- precondition of MutMem section 5.6, each with its own reason, and the memory's live weight may
-- only ever be set to the newest projection's new weight.

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

-- A signed retained baseline: a memory that starts away from 1.000 (a canary kept in quarantine
-- at 0.100) has its initial weight attested by the housekeeper (`aimos.cognitive-baseline/v1`).
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
CREATE TRIGGER weight_baselines_no_update BEFORE UPDATE ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: weight_baselines is append-only'); END;
CREATE TRIGGER weight_baselines_no_delete BEFORE DELETE ON weight_baselines
BEGIN SELECT RAISE(ABORT, 'aimos: weight_baselines is append-only'); END;
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

CREATE TRIGGER outcomes_no_update BEFORE UPDATE ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: outcomes are append-only'); END;
CREATE TRIGGER outcomes_no_delete BEFORE DELETE ON outcomes
BEGIN SELECT RAISE(ABORT, 'aimos: outcomes are append-only'); END;
CREATE TRIGGER weight_projections_no_update BEFORE UPDATE ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: weight_projections is append-only'); END;
CREATE TRIGGER weight_projections_no_delete BEFORE DELETE ON weight_projections
BEGIN SELECT RAISE(ABORT, 'aimos: weight_projections is append-only'); END;

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
            SELECT 1 FROM events e
            WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'mutation_outcome_evidence_v2'
              AND json_extract(e.signed_body, '$.metadata.outcome_id') = NEW.outcome_id
              AND json_extract(e.signed_body, '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(e.signed_body, '$.metadata.target_scope') = NEW.target_scope
              AND json_extract(e.signed_body, '$.metadata.reward_sign') = NEW.reward_sign);
    SELECT RAISE(ABORT, 'aimos: the receipt did not disclose this memory with this content to this agent')
        WHERE NOT EXISTS (
            SELECT 1 FROM recall_receipts r, json_each(r.evidence) e
            WHERE r.receipt_id = NEW.receipt_id AND r.agent_id = NEW.agent_id
              AND json_extract(e.value, '$.memory_id') = NEW.memory_id
              AND json_extract(e.value, '$.live_content_hash') = NEW.live_content_hash);
END;

-- REWEIGHT provenance nodes: housekeeper-signed (payload form), one chain per memory.
DROP TRIGGER memory_provenance_known_kind;
CREATE TRIGGER memory_provenance_known_kind BEFORE INSERT ON memory_provenance
WHEN NEW.event_type NOT IN ('SAVE', 'REWEIGHT')
BEGIN SELECT RAISE(ABORT, 'aimos: unknown provenance node type'); END;

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
        WHERE aimos_is_canonical(NEW.body_json) IS NOT 1
           OR NEW.company_id IS NOT (SELECT company_id FROM memories WHERE memory_id = NEW.memory_id)
           OR NEW.content_hash IS NOT aimos_sha256_hex(NEW.body_json)
           OR json_extract(NEW.body_json, '$.event_type') IS NOT 'REWEIGHT'
           OR json_extract(NEW.body_json, '$.company_id') IS NOT NEW.company_id
           OR json_extract(NEW.body_json, '$.memory_id') IS NOT NEW.memory_id
           OR json_extract(NEW.body_json, '$.ts_signed') IS NOT NEW.ts_signed;
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
            aimos_payload_message(NEW.body_json, NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

-- The writer's preconditions (MutMem section 5.6), each with its own reason.
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
              AND json_extract(p.body_json, '$.old_weight_milli') = NEW.old_weight_milli
              AND json_extract(p.body_json, '$.new_weight_milli') = NEW.new_weight_milli
              AND json_extract(p.body_json, '$.outcome_id') = NEW.outcome_id)
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

-- The live weight is a projection of its chain: it may only become the newest projection's
-- new weight; every other column of a memory stays as saved.
DROP TRIGGER memories_no_update;
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead')
        WHERE NEW.memory_id IS NOT OLD.memory_id OR NEW.company_id IS NOT OLD.company_id
           OR NEW.key IS NOT OLD.key OR NEW.value IS NOT OLD.value OR NEW.scope IS NOT OLD.scope
           OR NEW.memory_type IS NOT OLD.memory_type OR NEW.clearance_level IS NOT OLD.clearance_level
           OR NEW.data_class IS NOT OLD.data_class OR NEW.source IS NOT OLD.source
           OR NEW.author_agent_id IS NOT OLD.author_agent_id
           OR NEW.author_valid_from IS NOT OLD.author_valid_from OR NEW.created_at IS NOT OLD.created_at
           OR NEW.live_content_hash IS NOT OLD.live_content_hash
           OR NEW.save_provenance_id IS NOT OLD.save_provenance_id
           OR NEW.save_mutation_hash IS NOT OLD.save_mutation_hash
           OR NEW.quarantine IS NOT OLD.quarantine OR NEW.epistemic_label IS NOT OLD.epistemic_label;
    SELECT RAISE(ABORT, 'aimos: the live weight may only follow a signed, authorized transition')
        WHERE NEW.retrieval_weight_milli IS NOT (
            SELECT new_weight_milli FROM weight_projections WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
END;
