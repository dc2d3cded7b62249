"""Developer tools beside the library: screenshots of the notebooks and of the Dagster UI."""
