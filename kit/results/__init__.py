"""Typed, versioned records (``records``), their JSON form (``codec``), records files (``store``)."""
