"""Pack tools: validate (runs the stages over a pack), flow/PDL and scale-catalog generators, writer.
May import everything in pipeline/ below it (run, stages, ...); not evaluation.
"""
