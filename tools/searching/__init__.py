"""Support for search and find_files: ripgrep and globs."""
