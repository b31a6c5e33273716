"""Component mode synthesis (Craig-Bampton, free-interface, superelements): to come."""
