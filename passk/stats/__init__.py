"""Statistics beyond the chapter: the suite interval, exact coverage, the paired comparison and power."""
