"""Conversations that carry a plan out: a session's state, the turn engine, the API executors."""
