"""Image files as a model receives them: recognized by their bytes, size-capped, base64-encoded."""
