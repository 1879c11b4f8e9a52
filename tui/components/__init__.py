"""The design screen's panes, each a widget of its own (as Harlequin's `components/`).

`GraphPane` (the graph, whole or a neighbourhood), `DesignSummary` (who
made it, the verdict, size, the latest run's outcome), `FindingsList` (the
findings and missed defects to judge), `DesignTabs` (the highlighted
finding's catalogue words, cost, source, runs, recent verdicts) and
`JudgeBar` (progress and the highlighted finding's note). The screen
(`tui.screens.design`) wires them together and owns the keys.
"""
