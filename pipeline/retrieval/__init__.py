"""Goal retrieval: dense, sparse, hybrid retrievers (progressive, per clause), recall, training.
May import packs, records, settings; not llm nor the stages.
"""
