"""Hybrid retrieval: plan → embed → legs → fuse → filter → verdict → assemble."""

from .recipes import RECIPES, Recipe, get_recipe
from .types import Hit, LegScore, SearchRequest, SearchResult

__all__ = ["Hit", "LegScore", "RECIPES", "Recipe", "SearchRequest", "SearchResult", "get_recipe"]
