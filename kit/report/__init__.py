"""Pure rendering: measurement records in, tables (tabulate) and JSON-ready dicts out."""
