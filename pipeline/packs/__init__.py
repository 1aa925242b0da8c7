"""The domain pack format: Pack model and loader, flow specs (model, gold order, plan judge).
May import values, records, settings only.
"""
