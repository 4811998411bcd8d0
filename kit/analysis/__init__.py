"""Pure analysis of typed records: statistics, cells, comparisons, knees, the tables' figures
and the checks against the reference. No IO, no clock; ``kit.report`` renders the results."""
