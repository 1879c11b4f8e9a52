-- 0102: the loop (`kb cycle`): each cycle, each question it answered (the solver's answer and the
-- outcome it was judged against), and each use of a proposition the solver invoked
-- (helpful / harmful / neutral, ACE-style). A question answered by a cycle has left the stream.

CREATE SEQUENCE kb_cycle_ids START 1;

CREATE TABLE kb_cycles (
    id          BIGINT PRIMARY KEY DEFAULT nextval('kb_cycle_ids'),
    started_at  TIMESTAMP NOT NULL,
    actor       VARCHAR,
    solver      VARCHAR NOT NULL,         -- rules | llm <endpoint>
    executed    BOOLEAN NOT NULL,         -- outcomes from runs made now, not the records
    n_questions INTEGER NOT NULL,
    correct     INTEGER NOT NULL,
    pack_ids    VARCHAR NOT NULL,         -- JSON list, pack order, as the solver read it
    proposed    VARCHAR                   -- JSON list of the proposition ids it proposed
);

CREATE TABLE kb_answers (
    cycle_id     BIGINT NOT NULL,
    question_id  VARCHAR NOT NULL,
    answer       VARCHAR,                 -- the solver's letter (NULL: none parsed)
    answered_by  VARCHAR NOT NULL,        -- kb | fallback | llm | unparsed
    outcome      VARCHAR,                 -- the winner's letter (NULL: not retained on re-execution)
    outcome_from VARCHAR NOT NULL,        -- record | executed
    reproduced   BOOLEAN,
    note         VARCHAR,
    recorded_at  TIMESTAMP NOT NULL
);

CREATE TABLE kb_uses (
    cycle_id    BIGINT NOT NULL,
    question_id VARCHAR NOT NULL,
    prop_id     INTEGER NOT NULL,
    effect      VARCHAR NOT NULL CHECK (effect IN ('helpful', 'harmful', 'neutral')),
    favoured    VARCHAR,                  -- the letters it favoured, comma-separated
    reason      VARCHAR,
    recorded_at TIMESTAMP NOT NULL
);
