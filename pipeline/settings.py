"""Settings from the environment (prefix NESYPLAN_), e.g. NESYPLAN_PLANNER_TIMEOUT_S=30."""

from __future__ import annotations

from functools import lru_cache

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="NESYPLAN_")

    clingo_timeout_s: float = 10.0
    planner_timeout_s: float = 20.0
    planner_alias: str = "lama-first"
    redis_url: str = "redis://127.0.0.1:6379/0"


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings()
