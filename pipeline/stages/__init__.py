"""The five stages, artifact to artifact: translate -> check -> materialize -> compile -> plan.
May import llm, retrieval, packs, values, records, settings; no stage another (translate: check).
"""
