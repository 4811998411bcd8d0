"""Harnesses that measure the kit itself: ``bench`` (speed and accuracy ratios), ``soak``."""
