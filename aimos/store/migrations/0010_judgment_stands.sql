-- aimos brain schema, migration 10: a person's judgment stands against the classifier.
--
-- The writers (the reference kernel and the agreement detector) never label a memory a person has
-- judged, but nothing stopped a writer holding the housekeeper's key from appending a classifier
-- row after the judgment: a poison_confirmed lifted back to unverified, or a person's supported
-- buried as poison_likely, by a row that verified. Now a classification of basis 'classifier' is
-- refused on a memory with any judgment (basis 'explicit') in its chain; both verifiers report one
-- (classifier_overruled_judgment, aimos/verify/kit/inheritance.py). A person changes a judgment by
-- judging again.

CREATE TRIGGER memory_classifications_judgment_stands BEFORE INSERT ON memory_classifications
WHEN NEW.basis = 'classifier'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a person judged this memory: the classifier may not label it again')
        WHERE EXISTS (SELECT 1 FROM memory_classifications
                      WHERE memory_id = NEW.memory_id AND basis = 'explicit');
END;
