"""Infrastructure shared by every layer: atomic file writes, thread limits, parallel work units."""
