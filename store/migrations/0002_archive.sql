-- 0002: archiving hides a design from the queue; its findings, judgments,
-- missed defects and runs stay, and restoring it brings it back as it was.

ALTER TABLE designs ADD COLUMN archived_at TIMESTAMP;   -- NULL: in the queue
ALTER TABLE designs ADD COLUMN archived_by VARCHAR;
