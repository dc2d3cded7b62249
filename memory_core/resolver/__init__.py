"""The conflict resolver: judges written statements against their peers, after the write."""
