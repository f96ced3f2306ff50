"""What every page shares: the page list (nav), the model and context pickers and the work check
(widgets), coloured tokens (tokens), cached library calls (cached), heavy-work slots (heavy), the
browser animations (animations) and the one round stepper (stepper)."""
