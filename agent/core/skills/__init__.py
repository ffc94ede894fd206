"""Skills in the open Agent Skills layout: a folder with a SKILL.md (name, description, instructions)."""
