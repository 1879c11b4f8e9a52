-- 0010: curation steps (one undo model that survives a restart), flags for later, adjudications.
--
-- A step is one thing a curator did: a verdict, a note edited, a bulk verdict over many findings,
-- a flag, a missed defect marked or retracted, an adjudication. Every row a step writes carries its
-- number (one shared sequence, so steps order across tables); undo takes back the curator's newest
-- step that is not undone yet, whole, and may be repeated (store/judgments.py).

CREATE SEQUENCE curation_steps START 1;

ALTER TABLE judgments ADD COLUMN step BIGINT;
ALTER TABLE missed_defects ADD COLUMN step BIGINT;
ALTER TABLE missed_defects ADD COLUMN retracted_step BIGINT;

-- Rows written before steps existed: one step each, older than every new step (negative numbers),
-- in the order of their times.
UPDATE judgments SET step = epoch_us(judged_at) - 100000000000000000 WHERE verdict IS NOT NULL;
UPDATE missed_defects SET step = epoch_us(marked_at) - 100000000000000000;

CREATE SEQUENCE flag_ids START 1;

-- Append-only: a finding (or a design as a whole, finding_key NULL) flagged for later (flagged true),
-- the flag cleared (false), or an undo event (flagged NULL, undoes = the event undone).
CREATE TABLE flags (
    id          BIGINT PRIMARY KEY DEFAULT nextval('flag_ids'),
    design_id   VARCHAR NOT NULL,
    finding_key VARCHAR,
    curator     VARCHAR NOT NULL,
    flagged     BOOLEAN,
    note        VARCHAR,
    flagged_at  TIMESTAMP NOT NULL,
    step        BIGINT,
    undoes      BIGINT,
    CHECK ((flagged IS NULL) = (undoes IS NOT NULL))
);

-- What each curator has flagged for later now: the latest flag event not undone, when it flags.
CREATE VIEW current_flags AS
SELECT id, design_id, finding_key, curator, note, flagged_at
FROM (
    SELECT f.*,
           row_number() OVER (PARTITION BY f.design_id, f.finding_key, f.curator ORDER BY f.id DESC) AS rn
    FROM flags f
    WHERE f.flagged IS NOT NULL
      AND f.id NOT IN (SELECT undoes FROM flags WHERE undoes IS NOT NULL)
) WHERE rn = 1 AND flagged;

CREATE SEQUENCE adjudication_ids START 1;

-- Where curators disagree, an adjudicator records the final verdict of the finding (append-only,
-- undo events as in judgments).
CREATE TABLE adjudications (
    id          BIGINT PRIMARY KEY DEFAULT nextval('adjudication_ids'),
    design_id   VARCHAR NOT NULL,
    finding_key VARCHAR NOT NULL,
    adjudicator VARCHAR NOT NULL,
    verdict     VARCHAR CHECK (verdict IN ('real', 'false_alarm', 'unsure')),
    note        VARCHAR,
    adjudicated_at TIMESTAMP NOT NULL,
    step        BIGINT,
    undoes      BIGINT,
    CHECK ((verdict IS NULL) = (undoes IS NOT NULL))
);

-- The final verdict of each adjudicated finding: the latest adjudication not undone.
CREATE VIEW current_adjudications AS
SELECT id, design_id, finding_key, adjudicator, verdict, note, adjudicated_at
FROM (
    SELECT a.*,
           row_number() OVER (PARTITION BY a.design_id, a.finding_key ORDER BY a.id DESC) AS rn
    FROM adjudications a
    WHERE a.verdict IS NOT NULL
      AND a.id NOT IN (SELECT undoes FROM adjudications WHERE undoes IS NOT NULL)
) WHERE rn = 1;
