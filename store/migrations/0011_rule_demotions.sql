-- 0011: the project's demoted rules. A rule whose judged false-alarm rate is high can be demoted:
-- its findings stay (shown with the reason) but the queue's "to judge" counts pass them by.

CREATE TABLE rule_demotions (
    rule        VARCHAR PRIMARY KEY,
    reason      VARCHAR NOT NULL,
    demoted_by  VARCHAR NOT NULL,
    demoted_at  TIMESTAMP NOT NULL
);
