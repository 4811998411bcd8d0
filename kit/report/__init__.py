"""Pure rendering: analysed records in, tables (tabulate), markdown and JSON-ready dicts out."""
