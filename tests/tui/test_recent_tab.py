"""The Recent tab (design screen, `5`): every row of a step on one design names that design, however long
its free text (a missed defect's description, a note), since enter opens that design from the row."""

from __future__ import annotations

from apphelp import make_app, open_design, settle


async def test_every_recent_row_of_one_design_names_it(store_path):
    from archcurator.store import judgments as J
    from archcurator.store import missed as M

    J.record_judgment(store_path, "d-001", "shape.flatten-linear-width@fc", "ada", "real", "64 wide " * 40)
    M.record_missed_defect(store_path, "d-003", "ada", ["fc"], None, "the head is too narrow " * 20)
    M.record_missed_defect(store_path, "d-004", "ada", ["fc"], "shape.flatten-linear-width", "the head " * 30)
    J.set_flag(store_path, "d-002", "connectivity.dead-node@probe", "ada", True)
    defect = M.record_missed_defect(store_path, "d-005", "ada", ["fc"], None, "a long retracted one " * 20)
    M.retract_missed_defect(store_path, defect, "ada")
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        await pilot.press("5")
        await settle(pilot)
        ol = app.screen.query_one("#recent")
        rows = [ol.get_option_at_index(i) for i in range(ol.option_count)]
        assert len(rows) == 6
        for row in rows:
            design = (row.id or "").partition(":")[2]
            assert design and design in str(row.prompt), (row.id, str(row.prompt))
