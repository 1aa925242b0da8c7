"""Benchmark evaluators: call datasets (SPEC scorer, report), flow datasets (FLAP), prompt size.
May import everything in pipeline/ below it (run, stages, ...); not authoring.
"""
