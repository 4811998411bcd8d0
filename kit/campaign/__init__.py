"""Campaigns over a topology: run the planned order, warm up, show progress, resume; every
record is appended to the records file as soon as it exists."""
