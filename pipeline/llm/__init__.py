"""What translate asks of an LLM: backends (hf, openai), IR grammar, prompt + few-shot, LLM-only baseline.
May import packs, values, records, settings; not retrieval nor the stages.
"""
