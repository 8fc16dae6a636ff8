-- aimos brain schema, migration 11: a recall's decision is stored deflated.
--
-- The decision (every candidate the recall weighed, with its scores and why it was kept or left)
-- was most of a recall's bytes: about 17 KB of a 40 KB recall at limit 10, in canonical JSON that
-- deflates to a sixth. From now on the writer stores it once, deflated, in decision_deflated,
-- beside an empty decision text. Nothing that is hashed or signed changes: decision_sha256 is
-- still the hash of the canonical text, and the seals hash the text the row stands for
-- (aimos/store/seals.py STORED_FORMS reads it back through aimos_inflate), so every seal made
-- before this migration still verifies and the rows written before it are left as they are.
--
-- The insert trigger binds the stored form of every receipt written from now on: deflated bytes
-- beside an empty text, inflating to the text whose hash the receipt (and its signed
-- recall_receipt event) names. An aimos from before this migration still running (a server started
-- before an upgrade) cannot insert a receipt: it has no aimos_inflate, so its insert fails rather
-- than seal a row in the old shape.

ALTER TABLE recall_receipts ADD COLUMN decision_deflated BLOB;

CREATE TRIGGER recall_receipts_decision_form BEFORE INSERT ON recall_receipts
BEGIN
    SELECT RAISE(ABORT, 'aimos: a receipt stores its decision deflated, beside an empty text, inflating to the decision its hash names')
        WHERE NEW.decision_deflated IS NULL OR NEW.decision IS NOT ''
           OR aimos_sha256_hex(aimos_inflate(NEW.decision_deflated)) IS NOT NEW.decision_sha256;
END;
