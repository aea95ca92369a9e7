"""Statistics beyond the chapter's estimators: intervals, comparisons, planning, simulation."""
