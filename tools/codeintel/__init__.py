"""Code intelligence for code_map: tree-sitter tags, their cache, ranking and the repo map."""
