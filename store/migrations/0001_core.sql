-- 0001: designs, findings, judgments (append-only events), missed defects, runs.
-- Times are UTC (TIMESTAMP without zone). JSON is stored as VARCHAR text.

CREATE TABLE designs (
    id               VARCHAR PRIMARY KEY,
    name             VARCHAR,
    author           VARCHAR NOT NULL CHECK (author IN ('human', 'agent', 'reference')),
    model            VARCHAR,
    task_set         VARCHAR,
    run              VARCHAR,            -- one recorded run of this author on this task set
    parent           VARCHAR,            -- id of the design this one derives from
    reference        VARCHAR,            -- a reference architecture to compare against
    source           VARCHAR,            -- file (and line) it was imported from
    graph            VARCHAR,            -- archgraph/1 JSON; NULL when ungenerated
    content_hash     VARCHAR,            -- sha256 of the stored compact graph JSON
    verdict          VARCHAR CHECK (verdict IN ('pass', 'warn', 'block')),  -- NULL when ungenerated
    n_nodes          INTEGER,
    n_block          INTEGER NOT NULL DEFAULT 0,   -- live (non-stale) findings by severity
    n_warn           INTEGER NOT NULL DEFAULT 0,
    params           BIGINT,
    flops            DOUBLE,             -- cost.flops_per_sample
    quoted_cost_usd  DOUBLE,             -- cost.quote.usd, on the design's own device
    quote_device     VARCHAR,
    cost_a10g_usd    DOUBLE,             -- one training run on the default GPU (A10G)
    cost             VARCHAR,            -- the verifier's whole cost dict, JSON
    error            VARCHAR,            -- why it could not be generated (ungenerated designs)
    extra            VARCHAR,            -- other fields of the batch line, JSON
    verifier_version VARCHAR,
    imported_at      TIMESTAMP NOT NULL,
    verified_at      TIMESTAMP,
    CHECK ((graph IS NULL) = (error IS NOT NULL))
);

CREATE TABLE findings (
    design_id        VARCHAR NOT NULL,
    key              VARCHAR NOT NULL,   -- rule@node,ids: stable across re-verification
    rule             VARCHAR NOT NULL,
    severity         VARCHAR NOT NULL CHECK (severity IN ('block', 'warn')),
    nodes            VARCHAR NOT NULL,   -- "a,b"
    node_list        VARCHAR[] NOT NULL,
    message          VARCHAR,
    verifier_version VARCHAR,
    stale            BOOLEAN NOT NULL DEFAULT false,  -- judged, but no longer fires
    first_seen       TIMESTAMP,
    last_seen        TIMESTAMP,
    PRIMARY KEY (design_id, key)
);

CREATE SEQUENCE judgment_ids START 1;

-- Append-only: a verdict event, or an undo event (verdict NULL, undoes = the event undone).
-- finding_key NULL is a judgment of the whole design: verdict 'clean'.
CREATE TABLE judgments (
    id          BIGINT PRIMARY KEY DEFAULT nextval('judgment_ids'),
    design_id   VARCHAR NOT NULL,
    finding_key VARCHAR,
    curator     VARCHAR NOT NULL,
    verdict     VARCHAR CHECK (verdict IN ('real', 'false_alarm', 'unsure', 'clean')),
    note        VARCHAR,
    judged_at   TIMESTAMP NOT NULL,
    undoes      BIGINT,
    CHECK ((verdict IS NULL) = (undoes IS NOT NULL)),
    CHECK (verdict IS NULL OR (verdict = 'clean') = (finding_key IS NULL))
);

-- The current verdict per (design, finding, curator): the latest verdict event not undone.
CREATE VIEW current_judgments AS
SELECT id, design_id, finding_key, curator, verdict, note, judged_at
FROM (
    SELECT j.*,
           row_number() OVER (PARTITION BY j.design_id, j.finding_key, j.curator ORDER BY j.id DESC) AS rn
    FROM judgments j
    WHERE j.verdict IS NOT NULL
      AND j.id NOT IN (SELECT undoes FROM judgments WHERE undoes IS NOT NULL)
) WHERE rn = 1;

CREATE SEQUENCE missed_defect_ids START 1;

-- A defect a curator saw that no rule reported: for recall per rule.
CREATE TABLE missed_defects (
    id           BIGINT PRIMARY KEY DEFAULT nextval('missed_defect_ids'),
    design_id    VARCHAR NOT NULL,
    curator      VARCHAR NOT NULL,
    nodes        VARCHAR NOT NULL,
    node_list    VARCHAR[] NOT NULL,
    rule         VARCHAR,            -- the rule that should have fired, if any
    description  VARCHAR,
    marked_at    TIMESTAMP NOT NULL,
    retracted_at TIMESTAMP,
    CHECK (rule IS NOT NULL OR description IS NOT NULL)
);

CREATE SEQUENCE run_ids START 1;

CREATE TABLE runs (
    id          BIGINT PRIMARY KEY DEFAULT nextval('run_ids'),
    design_id   VARCHAR,
    question_id VARCHAR,
    kind        VARCHAR NOT NULL,    -- forward | train | question | ...
    backend     VARCHAR,             -- local | ray | ...
    device      VARCHAR,
    status      VARCHAR NOT NULL,    -- queued | running | ok | failed | timeout | killed | cancelled
    created_at  TIMESTAMP NOT NULL,
    started_at  TIMESTAMP,
    ended_at    TIMESTAMP,
    seconds     DOUBLE,
    exception   VARCHAR,
    message     VARCHAR,
    log_tail    VARCHAR,
    metrics     VARCHAR,             -- JSON
    spec        VARCHAR              -- JSON: what was asked for
);

-- Small facts about the store itself (e.g. when the demo was seeded).
CREATE TABLE store_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);
