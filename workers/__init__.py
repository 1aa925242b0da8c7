"""The service shell: Celery app and stage tasks over Redis, the run store, the HTTP API, serve-llm.
May import pipeline/; never nesyplan/.
"""
