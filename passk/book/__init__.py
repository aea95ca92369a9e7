"""The book's material shipped with the library: fault-injected scenarios, trajectory rules,
figures."""
