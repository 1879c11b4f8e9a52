-- 0100: ArchitectureIQ questions (executed, with their outcomes) and the
-- proposition knowledge base: propositions, raw evidence rows (one per
-- proposition and question), pairs marked distinct, the append-only audit
-- log of curator operations, and every prompt-pack export.
-- Times are UTC (TIMESTAMP without zone). JSON is stored as VARCHAR text.

CREATE TABLE aiq_questions (
    question_id    VARCHAR PRIMARY KEY,
    family         VARCHAR NOT NULL,
    category       VARCHAR NOT NULL,      -- optimizer_only | architecture_only | mixed | loss_only
    dataset_id     VARCHAR,
    split          VARCHAR NOT NULL,      -- train (mined and judged on) | test (held out for the replay)
    pair_id        VARCHAR,               -- same candidates, another dataset
    partner_id     VARCHAR,
    flip           BOOLEAN,               -- the pair's winners differ
    correct_letter VARCHAR NOT NULL,
    num_choices    INTEGER NOT NULL,
    device         VARCHAR,               -- where the ground truth was executed (cpu / cuda)
    synthetic      BOOLEAN NOT NULL DEFAULT true,
    gap            DOUBLE,
    win_rate       DOUBLE,
    source         VARCHAR,
    question       VARCHAR NOT NULL,      -- the whole question, JSON
    imported_at    TIMESTAMP NOT NULL
);

CREATE TABLE aiq_candidates (
    dataset_id   VARCHAR NOT NULL,
    candidate_id VARCHAR NOT NULL,
    recipe_id    VARCHAR,                 -- the same recipe across datasets
    family       VARCHAR,
    spec         VARCHAR NOT NULL,        -- candidate_spec JSON
    PRIMARY KEY (dataset_id, candidate_id)
);

CREATE TABLE aiq_outcomes (
    question_id  VARCHAR NOT NULL,
    letter       VARCHAR NOT NULL,
    candidate_id VARCHAR NOT NULL,
    is_winner    BOOLEAN NOT NULL,
    mean         DOUBLE,
    std          DOUBLE,
    failed_seeds INTEGER,
    finals       VARCHAR,                 -- final test metric per seed, JSON
    device       VARCHAR,
    PRIMARY KEY (question_id, letter)
);

CREATE SEQUENCE kb_prop_ids START 1;

CREATE TABLE kb_propositions (
    id            INTEGER PRIMARY KEY,
    text          VARCHAR NOT NULL,
    structure     VARCHAR NOT NULL,       -- {"scope": [...], "claim": {...}} JSON
    structure_key VARCHAR NOT NULL,       -- canonical text of the structure
    status        VARCHAR NOT NULL CHECK (status IN ('active', 'proposed', 'retired', 'merged', 'narrowed', 'withdrawn')),
    pinned        BOOLEAN NOT NULL DEFAULT false,
    origin        VARCHAR NOT NULL,       -- curator | miner | import | merge | narrow | seed
    source        VARCHAR,                -- who proposed it (solver, file, the curator)
    parent_id     INTEGER,                -- narrow: the proposition narrowed
    merged_into   INTEGER,                -- merged: the proposition it became part of
    merged_from   VARCHAR,                -- merge: the source ids, JSON list
    note          VARCHAR,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);

-- One row per proposition and question. Replaced as a whole for one
-- proposition by an operation; the audit log keeps what it was.
CREATE TABLE kb_evidence (
    prop_id     INTEGER NOT NULL,
    question_id VARCHAR NOT NULL,
    verdict     VARCHAR NOT NULL CHECK (verdict IN ('support', 'contradict', 'inapplicable')),
    reason      VARCHAR,
    split       VARCHAR,
    via         VARCHAR,                  -- derived | merged from P<n> | narrowed from P<n>
    recorded_at TIMESTAMP NOT NULL
);

CREATE TABLE kb_distinct (
    a         INTEGER NOT NULL,           -- a < b
    b         INTEGER NOT NULL,
    note      VARCHAR,
    marked_at TIMESTAMP NOT NULL
);

CREATE SEQUENCE kb_audit_ids START 1;

-- Append-only. `before` / `after`: snapshots of every proposition the
-- operation touched (row and evidence) and of the distinct pairs, JSON.
-- An undo is its own row; `undo_of` names the operation it reverted.
CREATE TABLE kb_audit (
    seq      BIGINT PRIMARY KEY DEFAULT nextval('kb_audit_ids'),
    logged_at TIMESTAMP NOT NULL,
    actor    VARCHAR,
    op       VARCHAR NOT NULL,
    prop_ids VARCHAR,
    args     VARCHAR,
    summary  VARCHAR,
    before   VARCHAR,
    after    VARCHAR,
    undo_of  BIGINT
);

CREATE SEQUENCE kb_export_ids START 1;

CREATE TABLE kb_pack_exports (
    id          BIGINT PRIMARY KEY DEFAULT nextval('kb_export_ids'),
    exported_at TIMESTAMP NOT NULL,
    actor       VARCHAR,
    format      VARCHAR NOT NULL,         -- json | text
    prop_ids    VARCHAR NOT NULL,         -- JSON list, pack order
    n           INTEGER NOT NULL,
    sha256      VARCHAR NOT NULL,
    content     VARCHAR NOT NULL,
    destination VARCHAR
);
