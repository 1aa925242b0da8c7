"""What the service tells its operators: Prometheus metrics (metrics) and OpenTelemetry traces (tracing).
Imports only settings below it, and never an ML library: every stage and the API import it.
"""
