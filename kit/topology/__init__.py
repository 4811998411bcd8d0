"""The processes on the measurement path: the process protocol every one of them speaks
(``protocol``), the one child-process type (``processes``), which program runs each kind
(``programs``), client workers kept for successive trials (``workers``), their CPU
(``cpu``), and trials run through server + delay line + client (``topology``)."""
