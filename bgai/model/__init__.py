"""The value model's inputs and parts: position classes, input encodings, nets."""
