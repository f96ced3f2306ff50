"""Training the tiny GPT pair: corpus, recipe, loop, checkpoints."""
