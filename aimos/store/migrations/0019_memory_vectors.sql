-- aimos brain schema, migration 19: a vector per memory, for recall by meaning (issue 37).
--
-- Derived data, like the search indexes: each row is the pinned embedding model's vector of a
-- memory's text (aimos/meaning: the model; meaning/vectors: the stored form, 4 + 384 bytes), made
-- after the save committed (never on the signed path), rebuilt by `aimos index rebuild` and checked
-- by `aimos verify` (recomputed from the memory's text: a sample, or every one with --vectors all).
-- Not sealed (store/seals.py DERIVED): a vector is replaced when the model changes and removed
-- when the master redacts its memory. A memory with no vector yet is still found by its words.
--
--   memory_vectors             one row per memory: its rowid, the model that made the vector
--                              (name and pinned hash), the stored vector (empty: no text to embed)
--   memory_vectors_generation  counts replaced or removed vectors, so a process that keeps the
--                              vectors in memory knows when more than new ones changed

CREATE TABLE memory_vectors (
    memory_rowid  INTEGER PRIMARY KEY,
    model         TEXT NOT NULL,
    vector        BLOB NOT NULL
) STRICT;

CREATE TABLE memory_vectors_generation (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    generation  INTEGER NOT NULL
) STRICT;

CREATE TRIGGER memory_vectors_of_a_memory BEFORE INSERT ON memory_vectors
BEGIN
    SELECT RAISE(ABORT, 'aimos: a vector belongs to a saved memory')
        WHERE NOT EXISTS (SELECT 1 FROM memories WHERE rowid = NEW.memory_rowid);
END;

-- (no row: generation 0)
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
