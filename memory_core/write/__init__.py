"""The write path: configuration, the named phases of a point write, peer verdicts, bulk and import."""
