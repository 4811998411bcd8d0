"""The processes on the measurement path: spawn and stop them (``processes``), account for
their CPU (``cpu``), and run trials through server + delay line + client (``topology``)."""
