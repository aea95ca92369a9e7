"""Reports built from Results: the report and its curve, the plan of more runs, the diff of two
versions."""
