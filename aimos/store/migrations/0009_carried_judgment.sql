-- aimos brain schema, migration 9: a correction carries the judgment on the version it corrects.
--
-- A correction (a save that supersedes a memory) is a new memory, and a new memory starts
-- 'unverified': an agent could lift a person's poison_confirmed, or the classifier's poison label,
-- by correcting the memory, with no master. Now, when the version corrected is less trusted than
-- unverified (disputed or a poison label), the save gives the new version, before its supersession
-- link, a housekeeper-signed classification (basis 'classifier') carrying the same label, whose
-- signals name the predecessor, its classification hash and its label; until a judgment the master
-- signs, no classification of the new version may be more trusting than that label. Both verifiers
-- check the same against the predecessor's signed label at the moment of the correction
-- (correction_lifted_judgment); aimos_carried_ok and aimos_correction_ok are their kernel
-- (aimos/verify/kit/inheritance.py).

-- 1. The supersession link needs the new version to carry the old one's adverse label: its newest
-- classification must be that carried label, naming the old version's newest classification.
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

-- 2. A classification of basis 'classifier': a label the classifier never gives only when it carries
-- the judgment of the version this memory corrects (its signed memory_saved event names it), exactly
-- as that version's newest classification says; and never more trusting than the label this memory
-- carries, unless a judgment the master signed came after it. (A row its authority event does not
-- bind is the classification's own insert trigger's to refuse.)
CREATE TRIGGER memory_classifications_carried_judgment BEFORE INSERT ON memory_classifications
WHEN NEW.basis = 'classifier'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a corrected version may not be more trusting than the label it carries, and only a correction carries one')
        FROM (SELECT (SELECT json_extract(e.signed_body, '$.metadata.supersedes') FROM events e
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
