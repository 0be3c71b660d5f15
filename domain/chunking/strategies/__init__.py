"""The four cutting strategies: STRUCTURE, RECURSIVE, SEMANTIC, LLM."""
