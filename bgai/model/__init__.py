"""Models of bgai: input features, value nets, model bundles and the exact bear-off database."""
