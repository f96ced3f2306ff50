"""What every page shares: the page list (nav), the model and context pickers, the scheme picker and the
work check (widgets), coloured tokens (tokens), cached library calls (cached), heavy-work slots (heavy),
the tiny GPT's loaded pairs and runs (gpt_runs), the browser animations (animations) and the one round
stepper (stepper)."""
