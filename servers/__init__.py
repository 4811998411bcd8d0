"""Server entry points the kit starts as their own processes."""
