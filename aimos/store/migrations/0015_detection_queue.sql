-- aimos brain schema, migration 15: the agreement detector runs after the save, never skipped.
--
-- The agreement detector (aimos/epistemic/detect.py) read a save's neighbours, counted its words
-- and judged its cluster inside the save's transaction: most of a save's time, and more as the brain
-- grew. A save now only queues its memory; the detector judges the queue in order, each memory as
-- it would have at its save (its neighbours, word counts and brain size bounded to the memories
-- saved before it), in a later write transaction: before any recall or show reads a memory (inside
-- its own write transaction, so no recall ever decides while a save before it waits to be judged),
-- before a correction carries its predecessor's label, after the command that saved it, and on the
-- housekeeper's schedule. Nothing is skipped: the queue is filled by this trigger, not by the writer,
-- and both tables are sealed like every other, so a row removed or added outside aimos is named at
-- the next write (row_missing, row_injected).
--
--   detection_queue  one row per memory the detector judges (not aimos's own guides, not a
--                    conversation's turns: epistemic/detect.py UNCHECKED_TYPES)
--   detection_runs   how far the queue has been judged: each run names the last queue row it judged

CREATE TABLE detection_queue (
    seq        INTEGER PRIMARY KEY,
    memory_id  TEXT NOT NULL REFERENCES memories(memory_id)
);

CREATE TABLE detection_runs (
    seq          INTEGER PRIMARY KEY,
    through_seq  INTEGER NOT NULL,
    ran_at       INTEGER NOT NULL
);

CREATE TRIGGER detection_queue_no_update BEFORE UPDATE ON detection_queue
BEGIN SELECT RAISE(ABORT, 'aimos: the detection queue is append-only'); END;
CREATE TRIGGER detection_queue_no_delete BEFORE DELETE ON detection_queue
BEGIN SELECT RAISE(ABORT, 'aimos: the detection queue is append-only'); END;
CREATE TRIGGER detection_runs_no_update BEFORE UPDATE ON detection_runs
BEGIN SELECT RAISE(ABORT, 'aimos: detection runs are append-only'); END;
CREATE TRIGGER detection_runs_no_delete BEFORE DELETE ON detection_runs
BEGIN SELECT RAISE(ABORT, 'aimos: detection runs are append-only'); END;

-- Only the memories trigger fills the queue (the memory just saved, in save order).
CREATE TRIGGER detection_queue_filled_by_save BEFORE INSERT ON detection_queue
BEGIN
    SELECT RAISE(ABORT, 'aimos: only a save queues a memory for the detector, in save order')
        WHERE NOT EXISTS (SELECT 1 FROM memories WHERE memory_id = NEW.memory_id
                          AND rowid = (SELECT MAX(rowid) FROM memories));
END;

CREATE TRIGGER memories_queue_detection AFTER INSERT ON memories
WHEN NEW.scope IS NOT 'system' AND NEW.memory_type NOT IN ('dialog_turn', 'message')
BEGIN
    INSERT INTO detection_queue (memory_id) VALUES (NEW.memory_id);
END;

-- A run moves forward, never past the queue's end (the newest run holds the mark: one lookup).
CREATE TRIGGER detection_runs_forward BEFORE INSERT ON detection_runs
BEGIN
    SELECT RAISE(ABORT, 'aimos: a detection run moves forward through the queue, never past its end')
        WHERE NEW.through_seq <= COALESCE((SELECT through_seq FROM detection_runs ORDER BY seq DESC LIMIT 1), 0)
           OR NEW.through_seq > COALESCE((SELECT MAX(seq) FROM detection_queue), 0);
END;
