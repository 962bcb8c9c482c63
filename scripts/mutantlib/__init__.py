"""scripts/mutants' modules: the list, the scratch tree, the trials."""
