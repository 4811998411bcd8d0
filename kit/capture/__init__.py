"""Passive HTTP/2 capture: ``frametap`` decodes what the delay line forwards (pure, per
direction); ``summary`` turns the proxy's tap lines into one typed summary per trial."""
