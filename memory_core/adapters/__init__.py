"""Adapters: one class per port, over DuckDB (``duckdb``), Lance (``lance``), the embedders and the
LLM client (``llm``). The only place in the library that writes SQL or touches an engine."""
