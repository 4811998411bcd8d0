"""Table 2, the two window layers on the wire: no cells of its own.

It reads the frame tap of table 1's 20 ms campaign (every cell there runs through the tap),
so asking for table 2 alone runs that campaign.
"""

from __future__ import annotations

from kit.plan.tables.windows import table1_campaign_name

WIRE_RTT_MS = 20.0
WIRE_CAMPAIGN = table1_campaign_name(WIRE_RTT_MS)
