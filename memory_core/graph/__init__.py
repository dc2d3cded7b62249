"""The entity graph: triples the rows state, kept current as the rows change."""
