"""Passive HTTP/2 capture: decode what the delay line forwards, summarize it per trial."""

from __future__ import annotations

from kit.capture.frametap import FrameTap, empty_summary
from kit.capture.summary import conn_record, proxy_record, read_tap, summarize

__all__ = ["FrameTap", "conn_record", "empty_summary", "proxy_record", "read_tap", "summarize"]
