-- 0101: where each question came from, and the miner's held-out record.
-- `origin`: shipped (the generated set seeded from assets/aiq) or imported (a bundle or a
-- question file someone imported; such questions are test questions unless marked otherwise).
-- `heldout`: for a mined proposition, its supports and contradictions on families it was not
-- selected on (cross-validated over families), and whether it holds in one family only (JSON).

ALTER TABLE aiq_questions ADD COLUMN origin VARCHAR DEFAULT 'imported';
UPDATE aiq_questions SET origin = 'shipped' WHERE source = 'archcurator generator (synthetic)';
ALTER TABLE kb_propositions ADD COLUMN heldout VARCHAR;
