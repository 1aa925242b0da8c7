"""Benchmark evaluators: call datasets (SPEC scorer), flow datasets (FLAP), speed streams, prompt size.
May import everything in pipeline/ below it (run, stages, ...); not authoring.
"""
